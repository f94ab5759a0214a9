#!/usr/bin/env bash
# The test suite: unit tests, and integration tests against Cosmos DB.
# With COSMOS_ENDPOINT (and COSMOS_KEY) set, the integration tests run against
# that endpoint (a real account or Microsoft's emulator); otherwise one local
# emulator is started for the whole run and stopped at the end.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ -z "${COSMOS_ENDPOINT:-}" ]; then
  export COSMOS_EMULATOR_PORT=${COSMOS_EMULATOR_PORT:-18081}
  ./scripts/emulator.sh start
  trap './scripts/emulator.sh stop' EXIT
  eval "$(./scripts/emulator.sh env)"
  export COSMOS_LOCAL_EMULATOR=1
fi

go test -race -count=1 -timeout 10m ./...


# The HTTP API's answers with curl against the host emulator (make http-demo,
# docs/http-api.md "Try it locally"); it holds a key's completion in a proxy in
# front of Cosmos, which needs a loopback http:// endpoint such as the emulator.
if [[ $COSMOS_ENDPOINT =~ ^http://(127\.0\.0\.1|localhost|\[::1\])[:/] ]]; then
  CGO_ENABLED=0 go build -trimpath -o bin/handler ./cmd/handler
  go build -o bin/localrun ./testbed/cmd/localrun
  demo=$(mktemp)
  if ! ./testbed/scripts/http-demo.sh >"$demo" 2>&1; then
    cat "$demo"
    rm -f "$demo"
    exit 1
  fi
  tail -n 1 "$demo"
  rm -f "$demo"
else
  echo "http-demo skipped: COSMOS_ENDPOINT is not a loopback http:// endpoint"
fi

# A short bounded fuzz run of every fuzz target (docs/fuzzing.md has the long one).
./scripts/fuzz.sh "${FUZZTIME:-10s}"
