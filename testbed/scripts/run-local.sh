#!/usr/bin/env bash
# make run: bin/localrun runs the handler under the Functions host emulator over a
# generated stream with the faults of at-least-once delivery, against the
# local Cosmos emulator, or the account in COSMOS_ENDPOINT (and COSMOS_KEY).
# Prints the summary; exits non-zero when the invariant fails, and then keeps
# the handler's log, the host emulator's lines and (off a terminal) the
# summary in .local/logs/run-… (RUN_LOG_DIR chooses the folder). make serve passes
# -serve: no stream, the HTTP triggers until Ctrl-C. Arguments go to
# bin/localrun (bin/localrun -h lists them).
set -euo pipefail
cd "$(dirname "$0")/../.."
. testbed/scripts/runlogs.sh

for b in bin/handler bin/localrun; do
  [ -x "$b" ] || { echo "run-local: $b is missing; use make run" >&2; exit 2; }
done
if [ -z "${COSMOS_ENDPOINT:-}" ]; then
  ./scripts/emulator.sh start
  trap './scripts/emulator.sh stop' EXIT
  eval "$(./scripts/emulator.sh env)"
fi
# The handler's log is in bin/localrun's -out folder (-app relative), which
# the next run overwrites.
app=. out=.local/hostemu prev= serve=
for a in "$@"; do
  case $prev in -app | --app) app=$a ;; -out | --out) out=$a ;; esac
  case $a in -app=* | --app=*) app=${a#*=} ;; -out=* | --out=*) out=${a#*=} ;; -serve | --serve) serve=1 ;; esac
  prev=$a
done
[[ $out == /* ]] || out=$app/$out
if [ -n "$serve" ]; then
  ./bin/localrun "$@"
  exit
fi
runlogs_start run
rc=0
if [ -t 1 ]; then
  ./bin/localrun -history-html "$RUNLOGS/history.html" "$@" || rc=$? # the terminal keeps the summary and localrun's progress bar
else
  ./bin/localrun -history-html "$RUNLOGS/history.html" "$@" | tee "$RUNLOGS/summary.txt" || rc=$?
fi
if [ "$rc" -ne 0 ] && [ -f "$out/handler.log" ]; then
  cp "$out/handler.log" "$RUNLOGS/"
fi
runlogs_end "$rc"
exit "$rc"
