#!/usr/bin/env bash
# make soak: make chaos over SOAK_SEEDS seeds in a row (default 10), a new
# random seed each, with SOAK_ARGS passed to every run (bin/chaos -h), against
# one local Cosmos emulator started here unless COSMOS_ENDPOINT is set. It
# stops at the first run that fails, whose logs (handler, host emulator,
# report) are kept and named; a passing run keeps its logs too when a killed
# instance took over SOAK_SLOW_KILL seconds (default 5) to complete an
# invocation, unless it was killed during an outage (the report says so).
# Each run prints one summary line; the last line is the total. The reports and summary.txt go to SOAK_DIR (default
# .local/soak/<UTC time>). See docs/evidence/chaos.md "Soak".
set -euo pipefail
cd "$(dirname "$0")/../.."

seeds=${SOAK_SEEDS:-10}
[[ $seeds =~ ^[1-9][0-9]*$ ]] || { echo "soak: SOAK_SEEDS=$seeds is not a number of runs" >&2; exit 2; }
[[ ${SOAK_SLOW_KILL:-5} =~ ^[0-9]+(\.[0-9]+)?$ ]] || { echo "soak: SOAK_SLOW_KILL=$SOAK_SLOW_KILL is not a number of seconds" >&2; exit 2; }
read -r -a args <<< "${SOAK_ARGS:-}"
for a in "${args[@]}"; do
  [[ $a == -seed* || $a == --seed* ]] && { echo "soak: SOAK_ARGS may not set -seed: every run takes a new one" >&2; exit 2; }
done
dir=${SOAK_DIR:-.local/soak/$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$dir"
summary=$dir/summary.txt

if [ -z "${COSMOS_ENDPOINT:-}" ]; then
  export COSMOS_EMULATOR_PORT=${COSMOS_EMULATOR_PORT:-18083}
  ./scripts/emulator.sh start
  trap './scripts/emulator.sh stop' EXIT
  eval "$(./scripts/emulator.sh env)"
fi

say() { echo "$*" | tee -a "$summary"; }
field() { sed -n "s/$1/\1/p" "$2" | head -n1; } # the first capture of a report line
# slow_kills REPORT: the kill figures of the instances row over SOAK_SLOW_KILL
# seconds, not made during an outage ("1 +32.47s"), one a line.
slow_kills() {
  sed -n 's/^  instances .*by instance: //p' "$1" | tr ',' '\n' |
    awk -v bound="${SOAK_SLOW_KILL:-5}" '/killed in outage/ { next } { t = $2; sub(/^\+/, "", t) }
      t ~ /[0-9]m[0-9]/ || (t ~ /[0-9]s$/ && t !~ /ms$/ && t + 0 >= bound) { print $1, $2 }'
}

say "soak: $seeds chaos runs, SOAK_ARGS='${SOAK_ARGS:-}', $(nproc) CPUs, started $(date -u +%FT%TZ), reports in $dir"
total_msgs=0 total_faults=0 total_kills=0 total_secs=0 passed=0
for ((i = 1; i <= seeds; i++)); do
  seed=$(( $(od -An -N4 -tu4 /dev/urandom) % 1000000 + 1 ))
  report=$dir/seed-$seed.txt
  start=$(date +%s)
  rc=0
  RUN_KEEP_LOGS=1 RUN_LOG_DIR=$dir/seed-$seed.logs ./testbed/scripts/chaos.sh -seed "$seed" "${args[@]}" > "$report" 2> "$dir/seed-$seed.stderr" || rc=$?
  secs=$(( $(date +%s) - start ))
  msgs=$(field '^  messages *\([0-9]*\) .*' "$report")
  faults=$(field '^  faults *\([0-9]*\) .*' "$report")
  kills=$(field '^  kills *\([0-9]*\) .*' "$report")
  violations=$(field '^  invariant violations = \([0-9]*\)$' "$report")
  # after each outage, from Cosmos answering again to the first order created
  recovered=$(sed -n 's/^  outage [0-9].*first order created +\([^,]*\),.*/\1/p' "$report" | paste -sd/ -)
  history=$(sed -n 's/^  history *\([0-9]*\) .* in \([0-9.a-zµ]*\);.*/\1 ops in \2/p' "$report" | head -n1 | tr ' ' _)
  twice=$(sed -n 's/^  published .* duplicates: \([0-9.]*\) per 10,000.*/\1/p' "$report" | head -n1)
  load=$(cut -d' ' -f1-3 /proc/loadavg)
  if [ "$rc" -eq 0 ]; then
    result=ok
    rm -f "$dir/seed-$seed.stderr"
    slow=$(slow_kills "$report" | paste -sd' ' -)
    if [ -n "$slow" ]; then
      result="ok, slow kill recovery $slow: logs kept in $dir/seed-$seed.logs"
    else
      rm -rf "$dir/seed-$seed.logs"
    fi
  elif [ -n "$violations" ]; then
    result="FAILED: $violations invariant violations"
  else
    result="FAILED: $(tail -n1 "$dir/seed-$seed.stderr")"
  fi
  say "$(printf 'soak %2d/%d  seed %-7s messages %-6s faults %-5s kills %-3s recovered %-13s history %-20s twice/10k %-5s wall %dm%02ds  load %s  %s' \
    "$i" "$seeds" "$seed" "${msgs:--}" "${faults:--}" "${kills:--}" "${recovered:--}" "${history:--}" "${twice:--}" $((secs / 60)) $((secs % 60)) "$load" "$result")"
  total_secs=$((total_secs + secs))
  if [ "$rc" -ne 0 ]; then
    grep -A6 '^    FAIL ' "$report" || tail -n5 "$dir/seed-$seed.stderr"
    say "soak: stopped at seed $seed after $passed passing runs; report $report, logs $dir/seed-$seed.logs"
    exit 1
  fi
  passed=$((passed + 1))
  total_msgs=$((total_msgs + msgs)) total_faults=$((total_faults + faults)) total_kills=$((total_kills + kills))
done
say "$(printf 'soak: %d of %d runs passed  messages %d  faults %d  kills %d  wall %dh%02dm' \
  "$passed" "$seeds" "$total_msgs" "$total_faults" "$total_kills" $((total_secs / 3600)) $((total_secs % 3600 / 60)))"
