package httpapi

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"time"

	"github.com/ordersink/orders-consumer/handler"
)

// exchange is one request of the HTTP API and the answer it gets,
// with what the log line of docs/contract.md §12 says about it.
type exchange struct {
	function, invocationID string
	// instance is the request's path, escaped, without the query (which may
	// carry the function key): the problem's "instance".
	instance string
	client   string // the client scope (clientScope)
	keyID    string // the idempotency key's record id: a hash, never the key
	orderID  string
	// outcome names the answer in logs: created, resumed, resent, taken,
	// replayed, found, or the refusal (keyReused, inFlight, invalid, …).
	outcome       string
	res           handler.HTTPResponse
	problem       *problem
	retryAfter    time.Duration
	tookOver      bool
	requestCharge float64
	err           error
}

// readRequest decodes the invocation's HTTP request; when it cannot, the
// answer is set and ok is false.
func (x *exchange) readRequest(w http.ResponseWriter, r *http.Request, limit int64) (req *handler.HTTPRequest, ok bool) {
	x.instance = ordersPath
	req, err := handler.ReadHTTPRequest(w, r, limit)
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		if x.function == FunctionSubmitOrder {
			x.refuse("tooLarge", problemTooLarge, fmt.Sprintf("The request, as the Functions host forwards it, is larger than %d bytes. Send an order of at most %d bytes.", limit, MaxSubmitBytes))
		} else {
			x.refuse("tooLarge", problemRequestTooLarge, fmt.Sprintf("The request, as the Functions host forwards it, is larger than %d bytes. A GET takes no body.", limit))
		}
		return nil, false
	}
	if err != nil {
		// Not the caller's fault: a renamed binding, a host or tool bug.
		x.fail(err)
		return nil, false
	}
	// The path as the caller wrote it, percent-encoding kept (RFC 3986): the
	// decoded one ("/api/orders/a?b") is no URI reference.
	if u, err := url.Parse(req.URL); err == nil && u.Path != "" {
		x.instance = u.EscapedPath()
	}
	return req, true
}

// refuse answers with a problem of type t.
func (x *exchange) refuse(outcome string, t problemType, detail string) {
	x.outcome = outcome
	x.problem = x.newProblem(t, detail)
}

// newProblem is a problem of type t about this request: its instance is the
// request's path, never the query, which may carry the function key.
func (x *exchange) newProblem(t problemType, detail string) *problem {
	return &problem{Type: ProblemTypeBase + t.anchor, Title: t.title, Status: t.status, Detail: detail,
		Instance: x.instance, InvocationID: x.invocationID}
}

// retryHint tells the client how to retry: a submission with its key and
// payload unchanged, so that it is never done twice.
func (x *exchange) retryHint() string {
	if x.keyID != "" {
		return "Retry with the same Idempotency-Key and payload after Retry-After seconds."
	}
	return "Retry after Retry-After seconds."
}

// finish answers the host and logs the exchange. Every answer is for its
// caller alone (RFC 9111 §5.2.2.5, no-store): a shared cache must keep
// neither an order nor a refusal.
func (cfg config) finish(w http.ResponseWriter, x *exchange, start time.Time) {
	if p := x.problem; p != nil {
		var h [][2]string
		if x.retryAfter > 0 {
			h = append(h, [2]string{"Retry-After", retryAfter(x.retryAfter.Seconds())})
		}
		a := p.answer(h...)
		x.res = handler.HTTPResponse{StatusCode: a.Status, Headers: a.Headers, Body: string(a.Body)}
	}
	if x.res.Headers == nil {
		x.res.Headers = map[string]string{}
	}
	x.res.Headers["Cache-Control"] = "no-store"
	cfg.logExchange(x, cfg.Now().Sub(start))
	line := fmt.Sprintf("%s: %d %s", x.function, x.res.StatusCode, x.outcome)
	if x.orderID != "" {
		line += " " + handler.LogValue(x.orderID)
	}
	handler.RespondHTTP(w, cfg.Logger, x.res, line)
}

// logExchange writes the structured line of one request (docs/contract.md
// §12), at the level of its answer (logLevel).
func (cfg config) logExchange(x *exchange, took time.Duration) {
	attrs := []slog.Attr{
		slog.String("function", x.function),
		slog.String("invocationId", x.invocationID),
		slog.String("outcome", x.outcome),
		slog.Int("httpStatus", x.res.StatusCode),
		slog.String("orderId", x.orderID),
		slog.Float64("durationMs", float64(took.Microseconds())/1000),
	}
	if x.client != "" {
		attrs = append(attrs, slog.String("clientHash", shortSHA256(x.client)))
	}
	if x.keyID != "" {
		attrs = append(attrs, slog.String("keyHash", x.keyID))
	}
	if x.requestCharge > 0 {
		attrs = append(attrs, slog.Float64("requestCharge", x.requestCharge))
	}
	if x.tookOver {
		attrs = append(attrs, slog.Bool("tookOver", true))
	}
	if x.problem != nil && x.err == nil {
		attrs = append(attrs, slog.String("description", x.problem.Detail))
	}
	if x.err != nil {
		attrs = append(attrs, slog.String("err", x.err.Error()))
		if status, sub := storeStatus(x.err); status != 0 {
			attrs = append(attrs, slog.Int("status", status), slog.Int("subStatus", sub))
		}
	}
	cfg.Logger.LogAttrs(context.Background(), logLevel(x.res.StatusCode), "invocation", attrs...)
}
