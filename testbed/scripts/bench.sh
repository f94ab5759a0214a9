#!/usr/bin/env bash
# Measures the consumer and rewrites docs/evidence/benchmarks.md (testbed/cmd/benchreport).
#
#   testbed/scripts/bench.sh [benchreport flags]     e.g. -rounds 9 -messages 4000
#
# With COSMOS_ENDPOINT (and COSMOS_KEY) set it measures against that endpoint;
# otherwise it starts the local emulator on COSMOS_EMULATOR_PORT (18095, apart
# from the test suite's) for the run and stops it at the end. Expects
# bin/handler (make build). Takes about 10 minutes with the defaults on a busy
# machine. EMULATOR_DIR is where scripts/emulator.sh keeps the emulator.
set -euo pipefail
cd "$(dirname "$0")/../.."

target="COSMOS_ENDPOINT (${COSMOS_ENDPOINT:-})"
pid_flag=()
if [ -z "${COSMOS_ENDPOINT:-}" ]; then
  export COSMOS_EMULATOR_PORT=${COSMOS_EMULATOR_PORT:-18095}
  ./scripts/emulator.sh start
  trap './scripts/emulator.sh stop' EXIT
  eval "$(./scripts/emulator.sh env)"
  emu_dir=${EMULATOR_DIR:-.emulator} # where scripts/emulator.sh installs and runs it
  version=$(sed -n 's/^[[:space:]]*"version": "\(.*\)",$/\1/p' "$emu_dir/node_modules/@vercel/cosmosdb-server/package.json" | head -1)
  pid_flag=(-emulator-pid "$(cat "$emu_dir/emulator-${COSMOS_EMULATOR_PORT}.pid")")
  target="local emulator @vercel/cosmosdb-server ${version} (scripts/emulator.sh), plain HTTP on 127.0.0.1, Node.js $(node --version)"
fi
[ -x bin/handler ] || { echo "bench: bin/handler missing; run make build" >&2; exit 1; }
go run ./testbed/cmd/benchreport -target "$target" "${pid_flag[@]}" -bin bin/handler -out docs/evidence/benchmarks.md "$@"
