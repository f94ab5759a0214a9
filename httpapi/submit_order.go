package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/ordersink/orders-consumer/handler"
	"github.com/ordersink/orders-consumer/idempotency"
	"github.com/ordersink/orders-consumer/internal/requestcharge"
	"github.com/ordersink/orders-consumer/orders"
)

// The HTTP API's functions; the names must match the function.json files.
const (
	FunctionSubmitOrder = "SubmitOrder"
	FunctionGetOrder    = "GetOrder"
)

// ordersPath is where the host serves the orders routes: its default route
// prefix "api" and SubmitOrder's route "orders".
const ordersPath = "/api/orders"

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

// httpFunction serves one HTTP function: it reads the invocation's request,
// has serve answer it within cfg.SubmitDeadline, and answers the host with
// the answer serve leaves in x, the request charge counted. A caller whose
// function key cannot stand for one client is refused before serve runs.
func (cfg config) httpFunction(function string, serve func(context.Context, *exchange, *handler.HTTPRequest)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		start := cfg.Now()
		x := exchange{function: function, invocationID: r.Header.Get("X-Azure-Functions-InvocationId")}
		ctx, cancel := context.WithTimeout(r.Context(), cfg.SubmitDeadline)
		defer cancel()
		ctx, charge := requestcharge.With(ctx)
		if req, ok := x.readRequest(w, r, maxHTTPInvocationBytes); ok {
			var byKey bool
			x.client, byKey = clientScope(req, cfg.EasyAuth)
			if why := keyOfNoClient(req.Key); byKey && why != "" {
				x.refuse("sharedKey", problemSharedKey, why+` Ask the operator for a function key of your own name (docs/runbook.md, "Onboard a partner").`)
			} else {
				serve(ctx, &x, req)
			}
		}
		x.requestCharge = charge.Units()
		cfg.finish(w, &x, start)
	}
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
	if err == nil && res.Outcome == idempotency.InFlight {
		// A live first request answers within its deadline (and settles its
		// key within SettleTimeout after); only one that died holds the key
		// for the rest of its lease. Come back when a live one has answered.
		x.retryAfter = min(x.retryAfter, cfg.SubmitDeadline+idempotency.SettleTimeout)
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

// submitted is the answer to store for what Submit decided: the order as
// stored for its owner (201 when this submission created it, 200 for a
// resend under a new key), its receipt to a client that does not own it
// (200), else 409 order-id-taken as a client error, so that a retry of
// this key is told the same. requestHash is the submission's fingerprint.
func (x *exchange) submitted(orderID, requestHash string, r orders.Submitted) (idempotency.Response, error) {
	switch r.Outcome {
	case orders.SubmitCreated, orders.SubmitResumed:
		x.outcome = "created"
		if r.Outcome == orders.SubmitResumed {
			x.outcome = "resumed"
		}
		return orderAnswer(http.StatusCreated, orderID, r.Document)
	case orders.SubmitResent:
		x.outcome = "resent"
		return orderAnswer(http.StatusOK, orderID, r.Document)
	case orders.SubmitKnown:
		x.outcome = "known"
		return receiptAnswer(orderID, r)
	}
	x.outcome = "taken"
	p := x.newProblem(problemOrderIDTaken, "This orderId holds another order. If yours is a different order, send it under an orderId of its own; "+
		"if it is this order changed, it is stored as first sent and sending it again does not change it.")
	if r.SameOwner {
		p.Detail = "You already sent an order with this orderId and other content; it is stored as first sent and sending it again does not change it. " +
			"Read it with GET " + ordersPath + "/" + url.PathEscape(orderID) + "; send a different order under an orderId of its own."
		p.StoredHash, p.RequestHash = r.StoredHash, requestHash
	}
	return idempotency.Response{}, idempotency.ClientError(p.answer())
}

// receipt is the body of a 200 to a client that does not own the order it
// sent: the order exists with the content this client sent (its
// fingerprint), accepted another way. It shows nothing the client did not
// send: not the stored meta, not when or by whom it was accepted.
type receipt struct {
	HashVersion int    `json:"hashVersion"`
	OrderID     string `json:"orderId"`
	RequestHash string `json:"requestHash"`
}

// receiptAnswer is the 200 of [orders.SubmitKnown].
func receiptAnswer(orderID string, r orders.Submitted) (idempotency.Response, error) {
	b, err := json.Marshal(receipt{HashVersion: r.HashVersion, OrderID: orderID, RequestHash: r.StoredHash})
	if err != nil {
		return idempotency.Response{}, fmt.Errorf("answer order %s: %w", orderID, err)
	}
	return idempotency.Response{Status: http.StatusOK, Headers: map[string]string{"Content-Type": "application/json"}, Body: b}, nil
}

// orderAnswer is an answer carrying a stored order document's public view.
func orderAnswer(status int, orderID string, doc []byte) (idempotency.Response, error) {
	view, err := orders.PublicView(doc)
	if err != nil {
		return idempotency.Response{}, fmt.Errorf("answer order %s: %w", orderID, err)
	}
	h := map[string]string{"Content-Type": "application/json"}
	if status == http.StatusCreated {
		h["Location"] = ordersPath + "/" + url.PathEscape(orderID)
	}
	return idempotency.Response{Status: status, Headers: h, Body: view}, nil
}

// judged turns what the idempotency service made of the request into the
// answer. Nothing is written for a replay, a mismatch or a key in flight.
func (x *exchange) judged(res idempotency.Result, err error) {
	if err != nil {
		x.storeFailed(err)
		return
	}
	x.tookOver = res.TookOver
	switch res.Outcome {
	case idempotency.Executed, idempotency.Replayed:
		x.res = handler.HTTPResponse{StatusCode: res.Response.Status, Headers: map[string]string{}, Body: string(res.Response.Body)}
		for k, v := range res.Response.Headers {
			x.res.Headers[k] = v
		}
		if res.Outcome == idempotency.Replayed {
			x.res.Headers[headerReplayed] = "true"
			x.outcome = "replayed"
		}
	case idempotency.Mismatch:
		x.refuse("keyReused", problemKeyReused, "This Idempotency-Key was used with another payload. Use a new key for a new order; retry an order with its own key and its exact payload.")
	case idempotency.InFlight:
		x.refuse("inFlight", problemInFlight, "A request with this Idempotency-Key is still being processed. "+x.retryHint())
		x.retryAfter = res.RetryAfter
	default:
		x.fail(fmt.Errorf("idempotency: unexpected outcome %v", res.Outcome))
	}
}

// storeFailed answers a request the store could not serve: 503 when a
// retry may succeed (the store is throttled or down, the request ran out of
// time, another attempt holds the key), 500 otherwise.
func (x *exchange) storeFailed(err error) {
	x.err = err
	if errors.Is(err, idempotency.ErrFenced) {
		// This attempt's lease ended before it completed: another attempt
		// owns the key now, and a retry gets that one's answer.
		x.refuse("inFlight", problemInFlight, "Another request with this Idempotency-Key took over. "+x.retryHint())
		x.retryAfter = time.Second
		return
	}
	if orders.IsTransient(err) {
		x.refuse("unavailable", problemUnavailable, "The orders store cannot be reached just now. "+x.retryHint())
		x.retryAfter = unavailableRetryAfter
		return
	}
	x.fail(err)
}

// unavailableRetryAfter is the pause a 503 asks for: long enough for a
// throttled or recovering store, short against a client's patience.
const unavailableRetryAfter = 2 * time.Second
