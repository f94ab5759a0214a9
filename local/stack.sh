#!/usr/bin/env bash
# The local stack for `func start` (local/compose.yaml): make local-stack / make local-stack-down.
#
#   local/stack.sh up      start Azurite, the Service Bus emulator and the Cosmos DB emulator,
#                          wait for them, export the Cosmos emulator's certificate, create the
#                          shop database and its containers
#   local/stack.sh down    stop and remove the containers
#
# Needs Docker with the compose plugin, curl and Go. ACCEPT_EULA=Y must be exported by you: it
# accepts the licences of SQL Server and the Service Bus emulator (docs/local-stack.md).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
compose=(docker compose -f "$here/compose.yaml" --env-file "$here/.env")

die() {
  echo "$*" >&2
  exit 1
}

# wait_for WHAT SECONDS COMMAND...: polls COMMAND every 5 s until it succeeds or SECONDS pass.
wait_for() {
  local what=$1 budget=$2 waited=0
  shift 2
  until "$@" >/dev/null 2>&1; do
    [ "$waited" -lt "$budget" ] || die "$what is not ready after ${budget}s: ${compose[*]} logs"
    sleep 5
    waited=$((waited + 5))
  done
  echo "$what is ready (${waited}s)"
}

up() {
  command -v docker >/dev/null || die "Docker is required (docs/local-stack.md)"
  [ "${ACCEPT_EULA:-}" = Y ] || die "export ACCEPT_EULA=Y once you have read the SQL Server and Service Bus emulator licences"
  if [ ! -f "$here/.env" ]; then
    # A password for the emulator's SQL Server, local to this machine, never committed.
    printf 'SQL_PASSWORD=Local-%s\n' "$(head -c 18 /dev/urandom | base64 | tr -dc 'A-Za-z0-9')" >"$here/.env"
  fi
  "${compose[@]}" up -d
  wait_for "Azurite" 60 curl -s -o /dev/null http://127.0.0.1:10000/
  wait_for "Cosmos DB emulator" 300 curl -sk -f -o "$here/cosmos-emulator.pem" https://localhost:8081/_explorer/emulator.pem
  # The health endpoint, not the AMQP port: the port opens before the emulator has created the
  # queues, and func start would then fail to bind its triggers.
  wait_for "Service Bus emulator" 180 curl -sf -o /dev/null http://127.0.0.1:5300/health
  # The Functions host (.NET) and the handler (Go) both honour SSL_CERT_FILE on Linux.
  cat /etc/ssl/certs/ca-certificates.crt "$here/cosmos-emulator.pem" >"$here/ca-bundle.pem" 2>/dev/null ||
    cp "$here/cosmos-emulator.pem" "$here/ca-bundle.pem"
  (cd "$root" && SSL_CERT_FILE="$here/ca-bundle.pem" COSMOS_ENDPOINT=https://localhost:8081/ \
    COSMOS_KEY="$(sed -n 's/.*"COSMOS_KEY": "\([^"]*\)".*/\1/p' "$root/local.settings.json")" go run ./cmd/cosmos-setup)
  cat <<MSG
The local stack is up. In this shell:
  export SSL_CERT_FILE=$here/ca-bundle.pem
  make build && func start
Send an order: docs/local-stack.md ("A first message").
MSG
}

case "${1:-}" in
up) up ;;
down) "${compose[@]}" down ;;
*) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
esac
