#!/usr/bin/env bash
# The proof of no flakes (docs/evidence/testing.md "No flakes: the proof"):
# the whole suite, go test -race -count=1 ./..., RUNS times in a row (3) in
# two copies side by side, then the same with -cpu 1. One line per run with
# its wall time and the load; a failing run's log is kept and named, and the
# script exits non-zero. Against COSMOS_ENDPOINT when set, else one local
# emulator started here. About 40 minutes on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."

runs=${RUNS:-3}
[[ $runs =~ ^[1-9][0-9]*$ ]] || { echo "flake-proof: RUNS=$runs is not a number of runs" >&2; exit 2; }
dir=${FLAKE_DIR:-.local/flake-proof/$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$dir"

if [ -z "${COSMOS_ENDPOINT:-}" ]; then
  export COSMOS_EMULATOR_PORT=${COSMOS_EMULATOR_PORT:-18087}
  ./scripts/emulator.sh start
  trap './scripts/emulator.sh stop' EXIT
  eval "$(./scripts/emulator.sh env)"
  export COSMOS_LOCAL_EMULATOR=1
fi

# copy NAME [go test flags]: RUNS runs in a row; stops at the first failure.
copy() {
  local name=$1
  shift
  for ((i = 1; i <= runs; i++)); do
    local log=$dir/$name-run$i.log start
    start=$(date +%s)
    if ! go test -race -count=1 -timeout 15m "$@" ./... >"$log" 2>&1; then
      echo "FAIL $name run $i after $(($(date +%s) - start)) s: $log"
      grep -E -- '^(--- FAIL|FAIL|panic:)' "$log" | head -n 5
      return 1
    fi
    echo "ok   $name run $i $(($(date +%s) - start)) s, load $(cut -d' ' -f1-3 /proc/loadavg)"
  done
}

# pair LABEL [go test flags]: two copies side by side.
pair() {
  local label=$1 start rc=0
  shift
  start=$(date +%s)
  copy "$label-a" "$@" &
  local a=$!
  copy "$label-b" "$@" &
  local b=$!
  wait "$a" || rc=1
  wait "$b" || rc=1
  echo "pair $label: $(($(date +%s) - start)) s"
  return "$rc"
}

echo "flake-proof: $runs runs x 2 copies, default then -cpu 1, $(nproc) CPUs, $(git rev-parse --short HEAD), logs in $dir"
rc=0
pair default || rc=1
pair cpu1 -cpu 1 || rc=1
[ "$rc" -eq 0 ] && echo "flake-proof: every run passed" || echo "flake-proof: FAILED (logs in $dir)"
exit "$rc"
