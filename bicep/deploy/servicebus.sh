#!/usr/bin/env bash
# Talk to the Service Bus queues over the REST API with your Entra identity (the namespace has
# SAS switched off, and the az CLI cannot send or receive messages). Needs az, curl and jq, and
# the deployer roles of bicep/modules/rbac.bicep (deployerPrincipalId).
#
#   servicebus.sh send     <namespace> <queue> <file> [message-id]   message-id defaults to the body's orderId
#   servicebus.sh peek     <namespace> <queue>    peek-lock the next message: print it and its lock URL
#   servicebus.sh complete <lock-url>             delete a message you peek-locked
#   servicebus.sh abandon  <lock-url>             unlock it again (it stays in the queue)
#   servicebus.sh resubmit <namespace> [--any-reason]
#       take the next parked envelope from orders-deadletter, send its original body to orders,
#       then complete the envelope. Only RetryBudgetExhausted without --any-reason.
#
# <namespace> is the fully qualified name (SERVICEBUS_FULLY_QUALIFIED_NAMESPACE output,
# e.g. sb-abc123.servicebus.windows.net). A queue's broker dead-letter queue is
# <queue>/$deadletterqueue, e.g. 'orders/$deadletterqueue'.
set -euo pipefail

die() {
  echo "$*" >&2
  exit 1
}

token() {
  az account get-access-token --resource https://servicebus.azure.net --query accessToken -o tsv
}

# send NAMESPACE QUEUE FILE MESSAGE_ID [SUBJECT]: SUBJECT is the Service Bus Label (the message
# type: OrderStatusChanged for status changes, none for orders).
send() {
  local status
  status=$(curl -sS -o /dev/stderr -w '%{http_code}' -X POST "https://$1/$2/messages" \
    -H "Authorization: Bearer $(token)" \
    -H "Content-Type: application/json" \
    -H "BrokerProperties: $(jq -cn --arg id "$4" --arg label "${5:-}" '{MessageId: $id} + (if $label == "" then {} else {Label: $label} end)')" \
    --data-binary "@$3")
  [ "$status" = 201 ] || die "send to $2 failed: HTTP $status"
  echo "sent to $2 with MessageId $4"
}

# peek NAMESPACE QUEUE OUT_DIR: writes body, properties and lock-url into OUT_DIR; returns 1 when empty.
peek() {
  local status
  status=$(curl -sS -X POST "https://$1/$2/messages/head?timeout=5" \
    -H "Authorization: Bearer $(token)" -H "Content-Length: 0" \
    -D "$3/headers" -o "$3/body" -w '%{http_code}')
  case "$status" in
  201) ;;
  204) return 1 ;;
  *) die "peek-lock on $2 failed: HTTP $status" ;;
  esac
  tr -d '\r' <"$3/headers" | sed -n 's/^[Bb]roker[Pp]roperties: //p' >"$3/properties"
  tr -d '\r' <"$3/headers" | sed -n 's/^[Ll]ocation: //p' >"$3/lock-url"
}

settle() {
  local status
  status=$(curl -sS -o /dev/null -w '%{http_code}' -X "$1" "$2" -H "Authorization: Bearer $(token)" -H "Content-Length: 0")
  [ "$status" = 200 ] || die "$1 $2 failed: HTTP $status (the lock may have expired; the message is delivered again)"
}

cmd=${1:-}
shift || true
case "$cmd" in
send)
  [ $# -ge 3 ] || die "usage: $0 send <namespace> <queue> <file> [message-id]"
  id=${4:-$(jq -r '.orderId // empty' "$3")}
  [ -n "$id" ] || die "no message id given and $3 has no orderId"
  send "$1" "$2" "$3" "$id"
  ;;
peek)
  [ $# -eq 2 ] || die "usage: $0 peek <namespace> <queue>"
  dir=$(mktemp -d)
  trap 'rm -rf "$dir"' EXIT
  peek "$1" "$2" "$dir" || die "$2 is empty"
  echo "broker properties: $(cat "$dir/properties")"
  echo "body:"
  jq . "$dir/body" 2>/dev/null || cat "$dir/body"
  echo
  echo "lock URL (complete or abandon it before the lock expires): $(cat "$dir/lock-url")"
  ;;
complete) settle DELETE "${1:?usage: $0 complete <lock-url>}" && echo completed ;;
abandon) settle PUT "${1:?usage: $0 abandon <lock-url>}" && echo unlocked ;;
resubmit)
  [ $# -ge 1 ] || die "usage: $0 resubmit <namespace> [--any-reason]"
  ns=$1
  dir=$(mktemp -d)
  trap 'rm -rf "$dir"' EXIT
  peek "$ns" orders-deadletter "$dir" || die "orders-deadletter is empty"
  reason=$(jq -r '.reason // empty' "$dir/body")
  order=$(jq -r '.orderId // empty' "$dir/body")
  if [ "$reason" != RetryBudgetExhausted ] && [ "${2:-}" != --any-reason ]; then
    settle PUT "$(cat "$dir/lock-url")"
    die "the next parked message is $reason (order '${order}'): resubmitting it unchanged gives the same answer. Fix the cause first, then use --any-reason"
  fi
  [ -n "$order" ] || { settle PUT "$(cat "$dir/lock-url")"; die "the parked envelope has no orderId (MalformedMessage): nothing to resubmit"; }
  # An envelope too large to carry its body points to it in Cosmos DB (contract section 6).
  if [ -n "$(jq -r '.bodyRef.id // empty' "$dir/body")" ]; then
    settle PUT "$(cat "$dir/lock-url")"
    die "the body of $order is kept in Cosmos DB ($(jq -c '.bodyRef' "$dir/body")): read it (docs/runbook.md, inspect a parked message) and resubmit it by hand"
  fi
  if [ "$(jq -r '.bodyEncoding // empty' "$dir/body")" = base64 ]; then
    jq -j '.body' "$dir/body" | base64 -d >"$dir/original"
  else
    jq -j '.body' "$dir/body" >"$dir/original"
  fi
  subject=$(jq -r '.subject // empty' "$dir/body")
  # A MessageId other than the orderId: the queue's duplicate detection would silently drop a
  # resend of the original MessageId inside its window. The consumer still deduplicates on
  # orderId (docs/contract.md §3), so a resubmit can never create a second order.
  send "$ns" orders "$dir/original" "$order:resubmit:$(date -u +%Y%m%dT%H%M%SZ)" "$subject"
  settle DELETE "$(cat "$dir/lock-url")"
  echo "resubmitted $order ($reason) and removed it from orders-deadletter"
  ;;
*)
  sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'
  [ -z "$cmd" ] || exit 2
  ;;
esac
