// Package httpapi is the HTTP API (docs/http-api.md): SubmitOrder, POST
// /api/orders with an Idempotency-Key, decides an order in the request by
// the queue path's rules, once per key; GetOrder, GET
// /api/orders/{orderId}, answers only the client that created the order.
// Functions serves them beside the queue functions, through handler's
// router (handler.Config.HTTP), on the wire format handler speaks.
//
//   - answers.go: every answer and its status: the problem types (RFC 9457)
//     and when each is answered, the order, the receipt, what the
//     idempotency service or a store failure amounts to, Retry-After, and
//     the log level of each status. Where a status is decided, it is here.
//   - submit_order.go: SubmitOrder's flow: the request's checks, the key,
//     the rules and the batch inside the key's work.
//   - get_order.go: GetOrder's flow: one point read, the same 404 for
//     every order the caller may not read.
//   - functions.go: Functions, their settings, and what every HTTP
//     function does around its flow (deadline, client, request charge).
//   - exchange.go: one request and its answer, and its log line
//     (docs/contract.md §12).
//   - client_scope.go: who the caller is (the client scope) and the
//     Idempotency-Key header.
//   - store_errors.go: what the log line asks of a store's error.
package httpapi
