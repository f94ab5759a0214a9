#!/usr/bin/env bash
# make chaos: the fault-injection run (bin/chaos) against the local Cosmos
# emulator, started here on its own port unless COSMOS_ENDPOINT is set (it
# must then be a loopback http:// emulator: the fault proxy forwards nowhere
# else). Arguments go to bin/chaos (bin/chaos -h lists them). Exits non-zero
# on any invariant violation, and then keeps the handler's log, the host
# emulator's lines and the report in .local/logs/chaos-… (RUN_LOG_DIR
# chooses the folder). See docs/evidence/chaos.md.
set -euo pipefail
cd "$(dirname "$0")/../.."
. testbed/scripts/runlogs.sh

for b in bin/handler bin/chaos; do
  [ -x "$b" ] || { echo "chaos: $b is missing; use make chaos" >&2; exit 2; }
done
if [ -z "${COSMOS_ENDPOINT:-}" ]; then
  export COSMOS_EMULATOR_PORT=${COSMOS_EMULATOR_PORT:-18083}
  ./scripts/emulator.sh start
  trap './scripts/emulator.sh stop' EXIT
  eval "$(./scripts/emulator.sh env)"
fi
runlogs_start chaos
rc=0
# A -handler-log or -history-html among the arguments wins over these.
./bin/chaos -handler-log "$RUNLOGS/handler.log" -history-html "$RUNLOGS/history.html" "$@" | tee "$RUNLOGS/report.txt" || rc=$?
runlogs_end "$rc"
exit "$rc"
