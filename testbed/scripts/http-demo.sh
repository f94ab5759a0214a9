#!/usr/bin/env bash
# make http-demo: every answer of the HTTP API (docs/http-api.md) with plain
# `curl -i` against the local host emulator, each one checked; exits non-zero
# on the first answer that differs from the contract (docs/contract.md §13).
# Starts what it needs and stops it on exit: the local Cosmos emulator
# (unless COSMOS_ENDPOINT is set), and bin/localrun -serve on a free loopback
# port with a fresh database, deleted at the end, with two function keys
# (partner-a and partner-b: two clients).
#
# The 409 in flight is made deterministic, not raced: localrun runs with
# -hold-key-completions, which holds the first request's last write (the
# completion of its key record, after its order was created) in a loopback
# proxy until another request has read that record. The first request is
# still running when the second one arrives, whatever the machine's speed;
# the second reads the `started` record and gets 409, and only then does the
# first complete and answer 201. Everything else is the real path: the
# handler, its Cosmos requests, the host's HTTP envelope.
set -euo pipefail
cd "$(dirname "$0")/../.."
repo=$(pwd)

for b in bin/handler bin/localrun; do
  [ -x "$b" ] || { echo "http-demo: $b is missing; use make http-demo" >&2; exit 2; }
done

work=$(cd "$(mktemp -d "${TMPDIR:-/tmp}/http-demo.XXXXXX")" && pwd)
localrun_pid=""
emulator_started=""
stop_all() {
  local rc=$?
  if [ -n "$localrun_pid" ] && kill -0 "$localrun_pid" 2>/dev/null; then
    kill -INT "$localrun_pid" 2>/dev/null || true # stops the handler, deletes its database
    for _ in $(seq 1 100); do kill -0 "$localrun_pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$localrun_pid" 2>/dev/null || true
  fi
  if [ "$rc" -ne 0 ] && [ -s "$work/host.log" ]; then
    echo "--- localrun's last lines ($work kept):" >&2
    tail -n 20 "$work/host.log" >&2
  else
    cd "$repo" # out of $work before it goes
    rm -rf "$work"
  fi
  [ -z "$emulator_started" ] || "$repo/scripts/emulator.sh" stop
}
trap stop_all EXIT

if [ -z "${COSMOS_ENDPOINT:-}" ]; then
  ./scripts/emulator.sh start
  emulator_started=1
  eval "$(./scripts/emulator.sh env)"
fi

# wait_for FILE PATTERN SECONDS [PID]: until FILE has a line matching PATTERN,
# while localrun (and PID) run.
wait_for() {
  local deadline=$((SECONDS + $3))
  until grep -q -- "$2" "$1" 2>/dev/null; do
    if [ $SECONDS -ge $deadline ]; then
      echo "http-demo: no \"$2\" in $1 within $3 s" >&2
      return 1
    fi
    kill -0 "$localrun_pid" 2>/dev/null || { echo "http-demo: localrun exited" >&2; return 1; }
    [ -z "${4:-}" ] || kill -0 "$4" 2>/dev/null || { echo "http-demo: the request ended before its completion was held" >&2; return 1; }
    sleep 0.1
  done
}

KEY_A=demo-partner-a-function-key
KEY_B=demo-partner-b-function-key
KEY_DEFAULT=demo-default-function-key
./bin/localrun -serve -http-addr 127.0.0.1:0 -hold-key-completions 10s -out "$work/out" \
  -function-key "partner-a=$KEY_A" -function-key "partner-b=$KEY_B" -function-key "default=$KEY_DEFAULT" \
  >"$work/serve.out" 2>"$work/host.log" &
localrun_pid=$!
wait_for "$work/serve.out" '^serving ' 60
base=$(sed -n 's/^serving .* on \(http[^;]*\); .*/\1/p' "$work/serve.out")
[ -n "$base" ] || { echo "http-demo: no base URL in $(cat "$work/serve.out")" >&2; exit 1; }

# The contract's example order (docs/contract.md §3), and the same order with
# another quantity and total: another payload.
printf '%s' '{"orderId":"ORD-2026-000123","customerId":"CUST-42","currency":"EUR","lines":[{"sku":"SKU-1","quantity":2,"unitPrice":"19.99"},{"sku":"SKU-7","quantity":1,"unitPrice":"5.00"}],"total":"44.98","placedAt":"2026-11-29T10:00:00Z","meta":{"sentAt":"2026-11-29T10:00:01.123Z","producer":"web-shop"}}' >"$work/order.json"
sed 's/"quantity":1/"quantity":2/; s/"44.98"/"49.98"/' "$work/order.json" >"$work/changed.json"
cd "$work"
API=$base/api
KEY=7c9e6679-7425-40de-944b-e07fc1f90ae7
ORDER=ORD-2026-000123
echo "API=$API  KEY=$KEY  KEY_A, KEY_B: the function keys named partner-a and partner-b"
echo "(order.json: the example order of docs/contract.md §3; changed.json: another quantity and total)"

failed=0
# show NAME TITLE CURL-ARGS...: runs curl -i, keeps its answer in NAME.txt
# (CR removed) and prints the command and the answer.
show() {
  local name=$1 title=$2
  shift 2
  printf '\n# %s\n$ curl -i %s\n' "$title" "$*"
  run_curl "$name" "$@"
  cat "$name.txt"
  echo
}
run_curl() {
  local name=$1
  shift
  eval "curl -i -sS --max-time 20 $*" >"$name.raw" || { echo "http-demo: curl $name failed" >&2; exit 1; }
  tr -d '\r' <"$name.raw" >"$name.txt"
  sed '1,/^$/d' "$name.txt" >"$name.body"
}
fail() { echo "  FAIL: $*"; failed=1; }
expect_status() { # NAME CODE
  local line
  line=$(head -n 1 "$1.txt")
  [[ $line =~ ^HTTP/[0-9.]+\ $2( |$) ]] || fail "$1: status line \"$line\", want $2"
}
header() { sed '/^$/q' "$1.txt" | grep -i "^$2:" | head -n 1 | sed 's/^[^:]*: *//'; }
expect_header() { # NAME HEADER VALUE-REGEX
  local v
  v=$(header "$1" "$2") || true
  [[ $v =~ ^$3$ ]] || fail "$1: header $2 \"$v\", want /$3/"
}
expect_no_header() { [ -z "$(header "$1" "$2")" ] || fail "$1: header $2 set, want none"; }
expect_body() { # NAME LITERAL
  grep -qF -- "$2" "$1.body" || fail "$1: body lacks $2"
}
expect_no_body() { # NAME LITERAL
  ! grep -qF -- "$2" "$1.body" || fail "$1: body shows $2"
}
same_body() { # NAME OTHER
  cmp -s "$1.body" "$2.body" || fail "$1: body differs from $2's"
}
problem() { # NAME STATUS ANCHOR
  expect_status "$1" "$2"
  expect_header "$1" Content-Type 'application/problem\+json.*'
  expect_body "$1" "\"type\":\"https://github.com/ordersink/orders-consumer/blob/main/docs/http-api.md#$3\""
  expect_body "$1" "\"status\":$2,"
}
json='-H "Content-Type: application/json"'
post='-X POST "$API/orders" -H "x-functions-key: $KEY_A" -H "Idempotency-Key: $KEY" '"$json"' --data-binary @order.json'

printf '\n# 1. partner A'"'"'s first request with the key; it runs in the background, held before its last write\n$ curl -i %s &\n' "$post"
run_curl first "$post" &
first_pid=$!
wait_for "$work/host.log" 'holding the completion of key record' 20 "$first_pid" || { cat first.txt; exit 1; }

show inflight "2. the same key while the first is in flight: 409 request-in-progress with Retry-After" "$post"
problem inflight 409 request-in-progress
expect_header inflight Retry-After '[1-9][0-9]*'

wait "$first_pid" || { echo "http-demo: the first request failed" >&2; exit 1; }
printf '\n# 1. (its answer, once the second request has seen it in flight): 201 Created, the order as stored\n'
cat first.txt
echo
expect_status first 201
expect_header first Location "/api/orders/$ORDER"
expect_no_header first Idempotent-Replayed
expect_body first "\"orderId\":\"$ORDER\""
expect_body first '"requestHash":"sha256:'
expect_no_body first '"owner"'

show replay "3. a retry with the key and the same payload: the stored answer, Idempotent-Replayed: true" "$post"
expect_status replay 201
expect_header replay Idempotent-Replayed true
expect_header replay Location "/api/orders/$ORDER"
same_body replay first

show resent "4. the same order under a new key: 200, the stored order, nothing written" \
  '-X POST "$API/orders" -H "x-functions-key: $KEY_A" -H "Idempotency-Key: $KEY-2" '"$json"' --data-binary @order.json'
expect_status resent 200
expect_no_header resent Idempotent-Replayed
same_body resent first

show taken "5. partner B sends another order with this orderId: 409 order-id-taken, no fingerprints" \
  '-X POST "$API/orders" -H "x-functions-key: $KEY_B" -H "Idempotency-Key: $KEY-b" '"$json"' --data-binary @changed.json'
problem taken 409 order-id-taken
expect_no_body taken 'Hash'

show known "5b. partner B sends this very order (a fall-back, a renamed key): 200, its receipt, nothing written" \
  '-X POST "$API/orders" -H "x-functions-key: $KEY_B" -H "Idempotency-Key: $KEY-b2" '"$json"' --data-binary @order.json'
expect_status known 200
expect_header known Cache-Control no-store
expect_body known "{\"hashVersion\":1,\"orderId\":\"$ORDER\",\"requestHash\":\"sha256:"
expect_no_body known '"acceptedAt"'

show reused "6. partner A's key with another payload: 422 idempotency-key-reused" \
  '-X POST "$API/orders" -H "x-functions-key: $KEY_A" -H "Idempotency-Key: $KEY" '"$json"' --data-binary @changed.json'
problem reused 422 idempotency-key-reused

show chunked "7. a chunked body (no Content-Length): 411 length-required" \
  '-X POST "$API/orders" -H "x-functions-key: $KEY_A" -H "Idempotency-Key: $KEY-3" '"$json"' -H "Transfer-Encoding: chunked" --data-binary @order.json'
problem chunked 411 length-required

show mine "8. GET by its owner: 200, the order as stored" '"$API/orders/$ORDER" -H "x-functions-key: $KEY_A"'
expect_status mine 200
same_body mine first

show notyours "9. GET by partner B: 404, as for an orderId nobody used" '"$API/orders/$ORDER" -H "x-functions-key: $KEY_B"'
problem notyours 404 order-not-found
run_curl unknown '"$API/orders/ORD-2026-999999" -H "x-functions-key: $KEY_B"'
problem unknown 404 order-not-found
sed 's/"instance":"[^"]*"//; s/"invocationId":"[^"]*"//' notyours.body >notyours.norm
sed 's/"instance":"[^"]*"//; s/"invocationId":"[^"]*"//' unknown.body >unknown.norm
cmp -s notyours.norm unknown.norm || fail "notyours: the 404 differs from that of an unknown orderId"

show shared "10. the platform's default key names no client: 403 shared-function-key" \
  '-X POST "$API/orders" -H "x-functions-key: $KEY_DEFAULT" -H "Idempotency-Key: $KEY-d" '"$json"' --data-binary @order.json'
problem shared 403 shared-function-key

if [ "$failed" -ne 0 ]; then
  echo "http-demo: some answers differ from docs/http-api.md" >&2
  exit 1
fi
echo "http-demo: every answer as docs/http-api.md says"
