#!/usr/bin/env bash
# make http-demo: every answer of the HTTP front door (docs/http-api.md) with
# plain `curl -i` against the local host emulator, each one checked; exits
# non-zero on the first answer that differs from the contract (docs/contract.md
# §13). Starts what it needs and stops it on exit: the local Cosmos emulator
# (unless COSMOS_ENDPOINT is set), and bin/hostemu -serve on a free loopback
# port with a fresh database, deleted at the end.
#
# The 409 is made deterministic, not raced: hostemu runs with
# -hold-key-completions, which holds the first request's last write (the
# completion of its key record) in a loopback proxy until another request
# has read that record. The first request has claimed its key and is still
# running when the second one arrives, whatever the machine's speed; the
# second reads the `started` record and gets 409, and only then does the
# first complete and answer 202. Everything else is the real path: the
# handler, its Cosmos requests, the host's HTTP envelope, the queue, the
# consumer.
set -euo pipefail
cd "$(dirname "$0")/../.."
repo=$(pwd)

for b in bin/handler bin/hostemu; do
  [ -x "$b" ] || { echo "http-demo: $b is missing; use make http-demo" >&2; exit 2; }
done

work=$(cd "$(mktemp -d "${TMPDIR:-/tmp}/http-demo.XXXXXX")" && pwd)
hostemu_pid=""
emulator_started=""
stop_all() {
  local rc=$?
  if [ -n "$hostemu_pid" ] && kill -0 "$hostemu_pid" 2>/dev/null; then
    kill -INT "$hostemu_pid" 2>/dev/null || true # stops the handler, deletes its database
    for _ in $(seq 1 100); do kill -0 "$hostemu_pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$hostemu_pid" 2>/dev/null || true
  fi
  if [ "$rc" -ne 0 ] && [ -s "$work/host.log" ]; then
    echo "--- hostemu's last lines ($work kept):" >&2
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
# while hostemu (and PID) run.
wait_for() {
  local deadline=$((SECONDS + $3))
  until grep -q -- "$2" "$1" 2>/dev/null; do
    if [ $SECONDS -ge $deadline ]; then
      echo "http-demo: no \"$2\" in $1 within $3 s" >&2
      return 1
    fi
    kill -0 "$hostemu_pid" 2>/dev/null || { echo "http-demo: hostemu exited" >&2; return 1; }
    [ -z "${4:-}" ] || kill -0 "$4" 2>/dev/null || { echo "http-demo: the request ended before its completion was held" >&2; return 1; }
    sleep 0.1
  done
}

./bin/hostemu -serve -http-addr 127.0.0.1:0 -hold-key-completions 10s -out "$work/out" \
  >"$work/serve.out" 2>"$work/host.log" &
hostemu_pid=$!
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
echo "API=$API  KEY=$KEY  (order.json: the example order of docs/contract.md §3; changed.json: another quantity and total)"

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
problem() { # NAME STATUS ANCHOR
  expect_status "$1" "$2"
  expect_header "$1" Content-Type 'application/problem\+json.*'
  expect_body "$1" "\"type\":\"https://github.com/ordersink/orders-consumer/blob/main/docs/http-api.md#$3\""
  expect_body "$1" "\"status\":$2,"
}
post='-X POST "$API/orders" -H "Idempotency-Key: $KEY" -H "Content-Type: application/json" --data-binary @order.json'

printf '\n# 1. the first request with the key; it runs in the background, held before its last write\n$ curl -i %s &\n' "$post"
run_curl first "$post" &
first_pid=$!
wait_for "$work/host.log" 'holding the completion of key record' 20 "$first_pid" || { cat first.txt; exit 1; }

show inflight "2. the same key while the first is in flight: 409 with Retry-After" "$post"
problem inflight 409 request-in-progress
expect_header inflight Retry-After '[1-9][0-9]*'

wait "$first_pid" || { echo "http-demo: the first request failed" >&2; exit 1; }
printf '\n# 1. (its answer, once the second request has seen it in flight): 202 with Location\n'
cat first.txt
echo
expect_status first 202
expect_header first Location "/api/orders/$ORDER"
expect_no_header first Idempotent-Replayed
expect_body first "\"orderId\":\"$ORDER\""
expect_body first "\"messageId\":\"$ORDER:"
expect_body first '"status":"submitted"'

show replay "3. a retry with the key and the same payload: the stored answer, Idempotent-Replayed: true" "$post"
expect_status replay 202
expect_header replay Idempotent-Replayed true
expect_header replay Location "/api/orders/$ORDER"
cmp -s first.body replay.body || fail "replay: body differs from the first answer's"

show reused "4. the key with another payload: 422 idempotency-key-reused" \
  '-X POST "$API/orders" -H "Idempotency-Key: $KEY" -H "Content-Type: application/json" --data-binary @changed.json'
problem reused 422 idempotency-key-reused

show nokey "5. no Idempotency-Key: 400" \
  '-X POST "$API/orders" -H "Content-Type: application/json" --data-binary @order.json'
problem nokey 400 idempotency-key-missing

# The consumer takes the order off the queue and stores it; GET says
# `submitted` until then. Poll, with a deadline.
deadline=$((SECONDS + 20))
while :; do
  run_curl get '"$API/orders/$ORDER"'
  grep -qF '"state":"accepted"' get.body && break
  [ $SECONDS -lt $deadline ] || break
  sleep 0.2
done
printf '\n# 6. the order once the consumer stored it: 200, accepted, with its fingerprint\n$ curl -i "$API/orders/%s"\n' "$ORDER"
cat get.txt
echo
expect_status get 200
expect_body get "\"orderId\":\"$ORDER\""
expect_body get '"state":"accepted"'
expect_body get '"requestHash":"sha256:'
expect_body get "\"messageId\":\"$(sed -n 's/.*"messageId":"\([^"]*\)".*/\1/p' first.body)\""

show unknown "7. an orderId nobody submitted: 404" '"$API/orders/ORD-2026-999999"'
problem unknown 404 order-not-found

if [ "$failed" -ne 0 ]; then
  echo "http-demo: some answers differ from docs/http-api.md" >&2
  exit 1
fi
echo "http-demo: every answer as docs/http-api.md says"
