#!/usr/bin/env bash
# Runs the handler locally against the local Cosmos emulator (or the account in
# COSMOS_ENDPOINT), the way the Functions host would start it.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ -z "${COSMOS_ENDPOINT:-}" ]; then
  ./infra/emulator.sh start
  trap './infra/emulator.sh stop' EXIT
  eval "$(./infra/emulator.sh env)"
fi
export FUNCTIONS_CUSTOMHANDLER_PORT=${FUNCTIONS_CUSTOMHANDLER_PORT:-8080}
exec ./bin/handler
