package httpapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/ordersink/orders-consumer/handler"
	"github.com/ordersink/orders-consumer/idempotency"
	"github.com/ordersink/orders-consumer/orders"
)

// MaxSubmitBytes bounds the body of a SubmitOrder request. The order
// document keeps the body with about 400 bytes of bookkeeping, within Cosmos
// DB's 2 MB per document and, with its OrderAccepted event (at most one
// Service Bus message), within the 2 MB of one transactional batch; the key
// record keeps the 201 answer (the order again) in base64, 4/3 of its size,
// within 2 MB too.
const MaxSubmitBytes = 1 << 20

// maxHTTPInvocationBytes bounds an HTTP function's invocation request: the
// host sends a body twice (Data.req.Body, and its top-level members in
// Metadata), each escaped once more as a JSON string, which at most doubles
// a valid JSON body; the rest is headers. A larger invocation carries a body
// over MaxSubmitBytes.
const maxHTTPInvocationBytes = 4*MaxSubmitBytes + 1<<20

// handleSubmitOrder is POST /api/orders (docs/http-api.md): the order is
// decided in the request, once per Idempotency-Key, by the queue path's
// rules.
func handleSubmitOrder(cfg config) http.HandlerFunc {
	return cfg.httpFunction(FunctionSubmitOrder, cfg.submit)
}

// submit decides a submission and leaves the answer in x.
func (cfg config) submit(ctx context.Context, x *exchange, req *handler.HTTPRequest) {
	if cfg.Idempotency == nil {
		x.fail(errors.New("SubmitOrder is not configured: the handler has no idempotency service"))
		return
	}
	if req.Header.Get("Content-Length") == "" {
		// The host forwards a body only with Content-Length > 0: a chunked
		// body never reaches us, and "body missing" would be untrue.
		x.refuse("noLength", problemLengthRequired, "Send the order with a Content-Length header (not chunked): the body of a request without one is not received.")
		return
	}
	key, err := idempotencyKey(req.Header)
	switch {
	case errors.Is(err, errMissingKey):
		x.refuse("noKey", problemKeyMissing, "Send an Idempotency-Key header (for example a UUID) and send the same key with every retry of this order.")
		return
	case err != nil:
		x.refuse("badKey", problemKeyMalformed, "The Idempotency-Key header must be 1 to 255 visible ASCII characters: "+err.Error()+".")
		return
	}
	scope := idempotency.Scope{Client: x.client, Operation: FunctionSubmitOrder, Key: key}
	x.keyID = scope.ID()
	switch {
	case len(req.Body) == 0:
		x.refuse("noBody", problemBodyMissing, "Send the order as a JSON object (docs/contract.md §3) in the request body.")
		return
	case len(req.Body) > MaxSubmitBytes:
		x.refuse("tooLarge", problemTooLarge, fmt.Sprintf("The order is %d bytes; at most %d are accepted. Send a smaller order.", len(req.Body), MaxSubmitBytes))
		return
	}
	// The key first: the payload is read for its fingerprint alone, and the
	// rules judge it inside the key's work, once. A retry is answered what
	// its key's first request was, whatever the rules, the settings or the
	// clock say by then.
	pl := orders.ReadPayload(req.Body)
	x.orderID = handler.Clip(pl.OrderID)
	sub := orders.Submission{Owner: x.client, ID: x.keyID}
	fp := idempotency.Fingerprint{Hash: pl.Hash, Version: orders.HashVersion, Under: pl.HashUnder}
	res, err := cfg.Idempotency.Execute(ctx, scope, fp, func(ctx context.Context) (idempotency.Response, error) {
		return cfg.decide(ctx, x, pl, sub)
	})
	x.judged(res, err)
	if err == nil && res.Verdict == idempotency.InFlight {
		// A live first request answers within its deadline (and finishes its
		// key within FinishTimeout after); only one that died holds the key
		// for the rest of its lease. Come back when a live one has answered.
		x.retryAfter = min(x.retryAfter, cfg.SubmitDeadline+idempotency.FinishTimeout)
	}
}

// decide is the work of a submission's key (docs/contract.md §13): the rules
// of §3, the event size included, then the order and its event in one
// transactional batch. Its answer is stored with the key and replayed to
// every retry, a refusal included: the same payload gets the same answer.
func (cfg config) decide(ctx context.Context, x *exchange, pl *orders.Payload, sub orders.Submission) (idempotency.Response, error) {
	o, batch, err := cfg.Processor.Admit(pl, sub)
	if err != nil {
		return cfg.refused(ctx, x, pl, sub, err)
	}
	r, err := cfg.Processor.Submit(ctx, o, batch, sub)
	if err != nil {
		return idempotency.Response{}, err
	}
	return x.submitted(o.ID, o.Hash, r)
}

// refused answers a body the rules refuse, unless the orderId holds this
// very content: an order accepted before (by an attempt of this key that
// died before its answer was stored, by the queue, under another key) is
// answered as accepted whatever the rules say now, so that a tightened rule
// or a lowered setting never tells a client to change an order it has.
// Only a body that is an order object can be such content.
func (cfg config) refused(ctx context.Context, x *exchange, pl *orders.Payload, sub orders.Submission, err error) (idempotency.Response, error) {
	var re *orders.RejectError
	if !errors.As(err, &re) {
		return idempotency.Response{}, err
	}
	if re.Reason == orders.MalformedMessage {
		x.refuse("malformed", problemMalformed, "The body is not an order document: "+re.Error()+".")
		return idempotency.Response{}, idempotency.ClientError(x.problem.answer())
	}
	if cfg.Orders != nil && orders.CheckOrderID(pl.OrderID) == nil {
		doc, err := cfg.Orders.ReadOrder(ctx, pl.OrderID)
		if err != nil {
			return idempotency.Response{}, err
		}
		if doc != nil {
			if r, err := pl.Against(doc, sub); err == nil && r.Outcome != orders.SubmitTaken {
				return x.submitted(pl.OrderID, pl.Hash, r)
			}
		}
	}
	x.refuse("invalid", problemInvalid, re.Error()+".")
	x.problem.Field = re.Field
	return idempotency.Response{}, idempotency.ClientError(x.problem.answer())
}
