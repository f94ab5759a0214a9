package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/ordersink/orders-consumer/handler"
	"github.com/ordersink/orders-consumer/idempotency"
	"github.com/ordersink/orders-consumer/orders"
)

// ProblemTypeBase prefixes every problem type URI: the anchors are the
// sections of docs/http-api.md that say what each problem means and what the
// client should do.
const ProblemTypeBase = "https://github.com/ordersink/orders-consumer/blob/main/docs/http-api.md#"

// problemType is one kind of refusal of the HTTP API.
type problemType struct {
	anchor string
	title  string
	status int
}

// The problem types of docs/http-api.md, each with its status and, above
// it, when it is answered; the anchors are part of the contract.
var (
	// SubmitOrder without an Idempotency-Key header.
	problemKeyMissing = problemType{"idempotency-key-missing", "Idempotency-Key header required", http.StatusBadRequest}
	// An Idempotency-Key that is not 1 to 255 visible ASCII characters, or
	// is sent twice.
	problemKeyMalformed = problemType{"idempotency-key-malformed", "Idempotency-Key header malformed", http.StatusBadRequest}
	// SubmitOrder with Content-Length 0.
	problemBodyMissing = problemType{"body-missing", "Request body required", http.StatusBadRequest}
	// SubmitOrder without Content-Length (chunked): the host forwards no
	// body then.
	problemLengthRequired = problemType{"length-required", "Content-Length required", http.StatusLengthRequired}
	// A body that is not an order object (the rules' MalformedMessage).
	problemMalformed = problemType{"malformed-order", "Request body is not an order document", http.StatusBadRequest}
	// An order object that breaks a rule of docs/contract.md §3.
	problemInvalid = problemType{"invalid-order", "Order breaks a rule", http.StatusUnprocessableEntity}
	// A body over MaxSubmitBytes, or a SubmitOrder invocation over its
	// limit.
	problemTooLarge = problemType{"order-too-large", "Order too large", http.StatusRequestEntityTooLarge}
	// An Idempotency-Key sent again with another payload.
	problemKeyReused = problemType{"idempotency-key-reused", "Idempotency-Key reused with another payload", http.StatusUnprocessableEntity}
	// An Idempotency-Key whose first request is still running, or was
	// taken over by another.
	problemInFlight = problemType{"request-in-progress", "A request with this Idempotency-Key is in progress", http.StatusConflict}
	// An orderId that holds another order.
	problemOrderIDTaken = problemType{"order-id-taken", "orderId already taken", http.StatusConflict}
	// A store that is down, throttled or too slow for the deadline.
	problemUnavailable = problemType{"service-unavailable", "Service temporarily unavailable", http.StatusServiceUnavailable}
	// GetOrder of an order the caller does not have: none, another
	// client's, the queue path's.
	problemNotFound = problemType{"order-not-found", "Order not found", http.StatusNotFound}
	// A GetOrder invocation over its limit.
	problemRequestTooLarge = problemType{"request-too-large", "Request too large", http.StatusRequestEntityTooLarge}
	// A function key that cannot stand for one client (the default key,
	// the master key, a system key).
	problemSharedKey = problemType{"shared-function-key", "Function key not assigned to one client", http.StatusForbidden}
	// A failure of ours: a configuration missing, a request the handler
	// cannot read, a store error a retry cannot mend.
	problemInternal = problemType{"internal-error", "Internal error", http.StatusInternalServerError}
)

// problem is an RFC 9457 problem details object. Detail speaks to the
// client: it says what was wrong with the request, never how the service
// failed (error texts of the store stay in the log).
type problem struct {
	Type     string `json:"type"`
	Title    string `json:"title"`
	Status   int    `json:"status"`
	Detail   string `json:"detail"`
	Instance string `json:"instance,omitempty"`
	// Field names the member of the order that broke a rule (invalid-order).
	Field string `json:"field,omitempty"`
	// StoredHash and RequestHash are the fingerprints of the stored order
	// and of the request (order-id-taken), given to the order's owner only.
	StoredHash  string `json:"storedHash,omitempty"`
	RequestHash string `json:"requestHash,omitempty"`
	// InvocationID lets support find the request in the logs.
	InvocationID string `json:"invocationId,omitempty"`
}

// answer renders the problem as the caller's answer; headers are added to
// it (Retry-After).
func (p *problem) answer(headers ...[2]string) idempotency.Response {
	b, _ := json.Marshal(p) // strings and ints only: it cannot fail
	h := map[string]string{"Content-Type": "application/problem+json"}
	for _, kv := range headers {
		h[kv[0]] = kv[1]
	}
	return idempotency.Response{Status: p.Status, Headers: h, Body: b}
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
func (x *exchange) judged(res idempotency.Execution, err error) {
	if err != nil {
		x.storeFailed(err)
		return
	}
	x.tookOver = res.TookOver
	switch res.Verdict {
	case idempotency.Executed, idempotency.Replayed:
		x.res = handler.HTTPResponse{StatusCode: res.Response.Status, Headers: map[string]string{}, Body: string(res.Response.Body)}
		for k, v := range res.Response.Headers {
			x.res.Headers[k] = v
		}
		if res.Verdict == idempotency.Replayed {
			x.res.Headers[headerReplayed] = "true"
			x.outcome = "replayed"
		}
	case idempotency.Mismatched:
		x.refuse("keyReused", problemKeyReused, "This Idempotency-Key was used with another payload. Use a new key for a new order; retry an order with its own key and its exact payload.")
	case idempotency.InFlight:
		x.refuse("inFlight", problemInFlight, "A request with this Idempotency-Key is still being processed. "+x.retryHint())
		x.retryAfter = res.RetryAfter
	default:
		x.fail(fmt.Errorf("idempotency: unexpected verdict %v", res.Verdict))
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

// found answers GetOrder with the caller's order: 200 and its public
// view.
func (x *exchange) found(orderID string, doc []byte) error {
	a, err := orderAnswer(http.StatusOK, orderID, doc)
	if err != nil {
		return err
	}
	x.outcome = "found"
	x.res = handler.HTTPResponse{StatusCode: a.Status, Headers: a.Headers, Body: string(a.Body)}
	return nil
}

// fail answers 500 for a failure of ours; err goes to the log only.
func (x *exchange) fail(err error) {
	x.err = err
	x.retryAfter = unavailableRetryAfter
	x.refuse("error", problemInternal, "The request could not be processed. "+x.retryHint()+" If it keeps failing, report the invocationId.")
}

// retryAfter is a Retry-After value in whole seconds, at least 1 (RFC 9110
// §10.2.3).
func retryAfter(seconds float64) string {
	n := int(seconds)
	if float64(n) < seconds {
		n++
	}
	return strconv.Itoa(max(n, 1))
}

// logLevel is the level of an answer's log line (docs/contract.md §12):
// refusals the client must fix and answers that ask for a retry at WARN,
// failures of ours at ERROR.
func logLevel(status int) slog.Level {
	switch {
	case status >= 500 && status != http.StatusServiceUnavailable:
		return slog.LevelError
	case status >= 400 && status != http.StatusNotFound:
		return slog.LevelWarn
	}
	return slog.LevelInfo
}
