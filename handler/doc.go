// Package handler is the Azure Functions custom handler's side of the wire
// format, the only package that knows it, and the functions the queue and
// the change feed trigger. The host invokes every function of the app by
// name on this one process; NewServer routes them, the HTTP API's too
// (Config.HTTP, package httpapi).
//
// The wire format (docs/host-wire-format.md):
//
//   - envelope.go: an invocation as the host POSTs it (Data, Metadata), a
//     trigger value in each of its encodings, host dates, body members that
//     shadow metadata keys.
//   - batch_envelope.go: the arrays of a batch and of a change feed.
//   - http_trigger.go: an HTTP trigger's request (Data.req) and the http
//     output binding the host answers the caller with.
//   - function_key.go: which function key the host authenticated a caller
//     with.
//   - response.go: the answer the host expects (Outputs, Logs,
//     ReturnValue), and a caller's value in a line of its Logs.
//
// The functions (docs/contract.md):
//
//   - server.go: Config, the router, the readiness probe, a panic as a
//     failed invocation.
//   - process_order.go: ProcessOrder, one message: its result, answer and
//     log line.
//   - process_order_batch.go: ProcessOrderBatch, settled all or nothing.
//   - requeue.go: a batch's transient messages, requeued (docs/contract.md §7).
//   - parking.go, parked_body.go: the parking envelope, and the body kept
//     apart when the envelope cannot carry it.
//   - publish_order_events.go: PublishOrderEvents, the outbox publisher.
//   - publish_set_aside.go: a change-feed document that can never be sent,
//     parked.
//   - budget.go: the size of every output as the host sends it.
//   - deadlines.go: each function's deadline, and the store's health in
//     the log (its levels).
//
// handlertest is the host's side of the wire for the tests of handler and
// httpapi.
package handler
