package httpapi

import (
	"net/http"
	"time"

	"github.com/ordersink/orders-consumer/handler"
	"github.com/ordersink/orders-consumer/idempotency"
)

// DefaultSubmitDeadline bounds a SubmitOrder or GetOrder invocation: a
// caller waits no longer than this for an answer, and it stays far below
// the idempotency lease (60 s), so a live attempt is never taken over
// (docs/contract.md §2).
const DefaultSubmitDeadline = 20 * time.Second

// Functions are the HTTP API's functions, SubmitOrder and GetOrder, with
// the settings of their own. The app serves them beside its queue functions
// (handler.Config.HTTP), on its settled Config: the processor, the order
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
// settled Config (handler.HTTPFunctions).
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

// config is what the HTTP functions run with: the app's settled Config and
// the HTTP API's own settings.
type config struct {
	handler.Config
	Functions
}
