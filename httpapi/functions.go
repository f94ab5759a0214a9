package httpapi

import (
	"context"
	"net/http"
	"time"

	"github.com/ordersink/orders-consumer/handler"
	"github.com/ordersink/orders-consumer/idempotency"
	"github.com/ordersink/orders-consumer/internal/requestcharge"
)

// The HTTP API's functions; the names must match the function.json files.
const (
	FunctionSubmitOrder = "SubmitOrder"
	FunctionGetOrder    = "GetOrder"
)

// ordersPath is where the host serves the orders routes: its default route
// prefix "api" and SubmitOrder's route "orders".
const ordersPath = "/api/orders"

// DefaultSubmitDeadline bounds a SubmitOrder or GetOrder invocation: a
// caller waits no longer than this for an answer, and it stays far below
// the idempotency lease (60 s), so a live attempt is never taken over
// (docs/contract.md §2).
const DefaultSubmitDeadline = 20 * time.Second

// Functions are the HTTP API's functions, SubmitOrder and GetOrder, with
// the settings of their own. The app serves them beside its queue functions
// (handler.Config.HTTP), on its resolved Config: the processor, the order
// reader, the logger and the clock are the queue functions' too.
type Functions struct {
	// Idempotency runs SubmitOrder once per Idempotency-Key
	// (docs/http-api.md); without it SubmitOrder answers 500.
	Idempotency *idempotency.Service
	// EasyAuth says that App Service Authentication runs in front of the
	// app (WEBSITE_AUTH_ENABLED): only then is X-MS-CLIENT-PRINCIPAL-ID the
	// platform's, and the client scope of an Idempotency-Key; without it the
	// header is ignored, since any caller could send one.
	EasyAuth bool
	// SubmitDeadline bounds a SubmitOrder or GetOrder invocation; keep it
	// below functionTimeout and the idempotency lease. Zero means
	// DefaultSubmitDeadline.
	SubmitDeadline time.Duration
}

var _ handler.HTTPFunctions = Functions{}

// Handlers returns the handler of each HTTP function by name, on the app's
// resolved Config (handler.HTTPFunctions).
func (f Functions) Handlers(app handler.Config) map[string]http.Handler {
	cfg := config{Config: app, Functions: f.withDefaults()}
	return map[string]http.Handler{
		FunctionSubmitOrder: handleSubmitOrder(cfg),
		FunctionGetOrder:    handleGetOrder(cfg),
	}
}

// withDefaults is f with every unset setting at its default.
func (f Functions) withDefaults() Functions {
	if f.SubmitDeadline <= 0 {
		f.SubmitDeadline = DefaultSubmitDeadline
	}
	return f
}

// config is what the HTTP functions run with: the app's resolved Config and
// the HTTP API's own settings.
type config struct {
	handler.Config
	Functions
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
