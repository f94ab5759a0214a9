package handler

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/ordersink/orders-consumer/idempotency"
	"github.com/ordersink/orders-consumer/orders"
)

// The HTTP front door's functions and SubmitOrder's output to the orders
// queue; the names must match the function.json files.
const (
	FunctionSubmitOrder = "SubmitOrder"
	FunctionGetOrder    = "GetOrder"
	OrderBinding        = "order"
)

// ordersPath is where the host serves the orders routes: its default route
// prefix "api" and SubmitOrder's route "orders".
const ordersPath = "/api/orders"

// submitAnswer is the body of SubmitOrder's 202.
type submitAnswer struct {
	OrderID   string `json:"orderId"`
	MessageID string `json:"messageId"`
	Status    string `json:"status"`
}

// handleSubmitOrder is POST /api/orders (docs/http-api.md): the order is
// judged by the queue path's rules, then sent to the orders queue once per
// Idempotency-Key through the `order` output binding.
func handleSubmitOrder(cfg Config) http.HandlerFunc {
	return cfg.frontDoor(FunctionSubmitOrder, cfg.submit)
}

// frontDoor serves one HTTP function: it reads the invocation's request,
// has serve answer it within cfg.SubmitDeadline, and answers the host with
// the answer and outputs serve leaves, the request charge counted.
func (cfg Config) frontDoor(function string, serve func(context.Context, *exchange, *httpRequest) map[string]any) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		start := cfg.Now()
		x := exchange{function: function, invocationID: r.Header.Get("X-Azure-Functions-InvocationId")}
		ctx, cancel := context.WithTimeout(r.Context(), cfg.SubmitDeadline)
		defer cancel()
		ctx, charge := orders.WithRequestCharge(ctx)
		var outputs map[string]any
		if req, ok := x.readRequest(w, r, cfg.MaxRequestBytes); ok {
			outputs = serve(ctx, &x, req)
		}
		x.requestCharge = charge.Units()
		cfg.finish(w, &x, outputs, start)
	}
}

// setFrontDoorDefaults fills what the HTTP functions read from the stores
// the Config already names.
func (cfg *Config) setFrontDoorDefaults() {
	if cfg.Orders == nil {
		cfg.Orders, _ = cfg.Processor.Store.(orders.ViewReader)
	}
	if cfg.Submissions == nil && cfg.Idempotency != nil {
		cfg.Submissions, _ = cfg.Idempotency.Store.(SubmissionFinder)
	}
}

// submit decides a submission and returns the outputs that go with the
// answer it leaves in x.
func (cfg Config) submit(ctx context.Context, x *exchange, req *httpRequest) map[string]any {
	if cfg.Idempotency == nil {
		x.fail(errors.New("SubmitOrder is not configured: the handler has no idempotency service"))
		return nil
	}
	key, err := idempotencyKey(req.Header)
	x.client = clientScope(req, cfg.EasyAuth)
	switch {
	case errors.Is(err, errMissingKey):
		x.refuse("noKey", problemKeyMissing, "Send an Idempotency-Key header (for example a UUID) and send the same key with every retry of this order.")
		return nil
	case err != nil:
		x.refuse("badKey", problemKeyMalformed, "The Idempotency-Key header must be 1 to 255 visible ASCII characters: "+err.Error()+".")
		return nil
	}
	scope := idempotency.Scope{Client: x.client, Operation: FunctionSubmitOrder, Key: key}
	x.keyID = scope.ID()
	if len(req.Body) == 0 {
		x.refuse("noBody", problemBodyMissing, "Send the order as a JSON object (docs/contract.md §3) in the request body.")
		return nil
	}
	o, out, ok := cfg.admit(x, req.Body)
	if !ok {
		return nil
	}
	accepted := func(context.Context) (idempotency.Response, error) {
		body, err := json.Marshal(submitAnswer{OrderID: o.ID, MessageID: out.messageID, Status: "submitted"})
		if err != nil {
			return idempotency.Response{}, fmt.Errorf("encode answer: %w", err)
		}
		return idempotency.Response{Status: http.StatusAccepted, Body: body, Headers: map[string]string{
			"Content-Type": "application/json", "Location": ordersPath + "/" + url.PathEscape(o.ID)}}, nil
	}
	res, err := cfg.Idempotency.Execute(ctx, scope, o.Hash, accepted, idempotency.WithOrderID(o.ID))
	outputs := x.judged(res, err, out.value)
	if err == nil && res.Outcome == idempotency.InFlight {
		// A live first request answers within its deadline (and settles its
		// key within SettleTimeout after); only one that died holds the key
		// for the rest of its lease. Come back when a live one has answered.
		x.retryAfter = min(x.retryAfter, cfg.SubmitDeadline+idempotency.SettleTimeout)
	}
	return outputs
}

// orderOutput is what SubmitOrder sends to the orders queue.
type orderOutput struct {
	messageID string
	value     map[string]Requeued
}

// admit applies the queue path's rules to the body (docs/contract.md §3,
// event size included) and builds the order output, which must fit one
// message as the host sends it. ok is false when the order is refused;
// nothing has been claimed then: the same body is refused on every retry,
// so there is no answer worth storing.
func (cfg Config) admit(x *exchange, body []byte) (*orders.Order, orderOutput, bool) {
	o, messageID, err := cfg.Processor.Admit(body)
	// Cut: a refused orderId may be as long as the request, and is logged
	// twice (the log line, the host's Logs). Only a refused body is decoded
	// again to find it.
	if o != nil {
		x.orderID = clip(o.ID)
	} else {
		x.orderID = clip(orders.PeekOrderID(body))
	}
	var re *orders.RejectError
	switch {
	case errors.As(err, &re) && re.Reason == orders.MalformedMessage:
		x.refuse("malformed", problemMalformed, "The body is not an order document: "+re.Error()+".")
		return nil, orderOutput{}, false
	case errors.As(err, &re):
		x.refuse("invalid", problemInvalid, re.Error()+".")
		x.problem.Field = re.Field
		return nil, orderOutput{}, false
	case err != nil:
		x.fail(err)
		return nil, orderOutput{}, false
	}
	// The consumer reads this as the message itself (docs/contract.md §7),
	// with the MessageId a producer would have set: the output binding
	// cannot set one (docs/host-wire-format.md §2.4).
	d := delivery{body: body, messageID: messageID, invocationID: x.invocationID}
	v, err := d.requeue(fmt.Sprintf("submitted through %s under idempotency key record %s", FunctionSubmitOrder, x.keyID), cfg.fitOutput)
	var tooLarge *OutputTooLargeError
	switch {
	case errors.As(err, &tooLarge):
		x.refuse("tooLarge", problemTooLarge, fmt.Sprintf("The order would be a queue message of %d bytes; at most %d fit. Send a smaller order.", tooLarge.Size, tooLarge.Budget))
		return nil, orderOutput{}, false
	case err != nil:
		x.fail(err)
		return nil, orderOutput{}, false
	}
	return o, orderOutput{messageID: d.messageID, value: v}, true
}

// judged turns what the idempotency service made of the request into the
// answer and the outputs. Every 2xx answer, a replay too, sends the order
// again: the host sends outputs only after our answer, so a first send that
// failed (the caller saw a 500 although the key was completed) is repaired
// by the retry, and the consumer absorbs the extra copies as duplicates.
func (x *exchange) judged(res idempotency.Result, err error, order map[string]Requeued) map[string]any {
	if err != nil {
		x.storeFailed(err)
		return nil
	}
	x.tookOver = res.TookOver
	switch res.Outcome {
	case idempotency.Executed, idempotency.Replayed:
		x.res = httpResponse{StatusCode: res.Response.Status, Headers: map[string]string{}, Body: string(res.Response.Body)}
		for k, v := range res.Response.Headers {
			x.res.Headers[k] = v
		}
		x.outcome = "accepted"
		if res.Outcome == idempotency.Replayed {
			x.res.Headers[headerReplayed] = "true"
			x.outcome = "replayed"
		}
		if res.Response.Status/100 == 2 {
			return map[string]any{OrderBinding: order}
		}
		return nil
	case idempotency.Mismatch:
		x.refuse("keyReused", problemKeyReused, "This Idempotency-Key was used with another payload. Use a new key for a new order; retry an order with its own key and its exact payload.")
	case idempotency.InFlight:
		x.refuse("inFlight", problemInFlight, "A request with this Idempotency-Key is still being processed. "+x.retryHint())
		x.retryAfter = res.RetryAfter
	default:
		x.fail(fmt.Errorf("idempotency: unexpected outcome %v", res.Outcome))
	}
	return nil
}

// storeFailed answers a request the idempotency service could not judge:
// 503 when a retry may succeed (the store is throttled or down, the request
// ran out of time, another attempt holds the key), 500 otherwise.
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
