#!/usr/bin/env bash
# make run: the handler under the Functions host emulator (bin/hostemu) over a
# generated stream with the faults of at-least-once delivery, against the
# local Cosmos emulator, or the account in COSMOS_ENDPOINT (and COSMOS_KEY).
# Prints the summary; exits non-zero when the invariant fails. make serve
# passes -serve: no stream, the HTTP triggers until Ctrl-C. Arguments go to
# bin/hostemu (bin/hostemu -h lists them).
set -euo pipefail
cd "$(dirname "$0")/../.."

for b in bin/handler bin/hostemu; do
  [ -x "$b" ] || { echo "run-local: $b is missing; use make run" >&2; exit 2; }
done
if [ -z "${COSMOS_ENDPOINT:-}" ]; then
  ./scripts/emulator.sh start
  trap './scripts/emulator.sh stop' EXIT
  eval "$(./scripts/emulator.sh env)"
fi
./bin/hostemu "$@"
