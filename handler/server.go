package handler

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/ordersink/orders-consumer/orders"
	"github.com/ordersink/orders-consumer/retrying"
)

// Function and binding names; they must match the function.json files.
const (
	FunctionProcessOrder = "ProcessOrder"
	TriggerBinding       = "message"
	ParkingBinding       = "parking"

	FunctionProcessOrderBatch = "ProcessOrderBatch"
	BatchTriggerBinding       = "messages"

	FunctionPublishOrderEvents = "PublishOrderEvents"
	DocumentsBinding           = "documents"
	EventsBinding              = "events"
)

// DefaultMaxRequestBytes bounds an invocation request. It is far above the
// largest Service Bus Standard message (256 KB) even after the host's double
// encoding, so only abnormal requests meet it.
const DefaultMaxRequestBytes = 4 << 20

// Config holds what the handlers need.
type Config struct {
	Processor *orders.Processor
	Logger    *slog.Logger
	// MaxRequestBytes bounds a ProcessOrder invocation read into memory;
	// zero means DefaultMaxRequestBytes. The HTTP functions have a bound of
	// their own, derived from httpapi.MaxSubmitBytes.
	MaxRequestBytes int64
	// MessageDeadline bounds a ProcessOrder invocation: the store's
	// transient failures are retried until then (Processor.Store is an
	// retrying.Store), and then the message goes back to the broker. It
	// also bounds the parked-body writes of a PublishOrderEvents
	// invocation. Keep it below functionTimeout and
	// maxAutoLockRenewalDuration; zero means DefaultMessageDeadline.
	MessageDeadline time.Duration
	// BatchDeadline bounds a ProcessOrderBatch invocation, whose locks are
	// never renewed: keep it below the queue's lock duration; zero means
	// DefaultBatchDeadline.
	BatchDeadline time.Duration
	// Health is the store's shared health state, when the Processor's
	// store is a retrying.Store using it: NewServer logs its changes
	// (when it has no OnChange yet), and authorization failures that last
	// longer than AuthAlarmAfter are logged at ERROR.
	Health *retrying.Health
	// AuthAlarmAfter is how long 401/403 answers are taken for a role
	// assignment still propagating; zero means DefaultAuthAlarmAfter.
	AuthAlarmAfter time.Duration
	// BatchParallelism bounds the messages of one batch processed at once;
	// zero means DefaultBatchParallelism.
	BatchParallelism int
	// MaxBatchRequestBytes bounds a batch or change feed invocation read
	// into memory; zero means DefaultMaxBatchRequestBytes.
	MaxBatchRequestBytes int64
	// Now returns the current time; nil means time.Now.
	Now func() time.Time
	// MaxMessageBytes is the broker's limit for one message, which every
	// output (parking envelope, event) must fit as the host sends it
	// (OutputBudget); zero means DefaultMaxMessageBytes.
	MaxMessageBytes int
	// Bodies keeps the bodies of parked messages too large for their
	// envelope; nil means Processor.Store, when it is a BodyStore.
	Bodies BodyStore

	// Orders reads the order stored under an orderId: the Processor's
	// look at an order accepted before (orders.Processor.Reader) and the
	// HTTP API's GetOrder; nil means Processor.Store, when it is an
	// OrderReader.
	Orders orders.OrderReader
	// HTTP are the app's HTTP-triggered functions (httpapi.Functions),
	// served beside the queue functions; nil serves none.
	HTTP HTTPFunctions

	fitOutput func(v any) error
}

// HTTPFunctions are the app's HTTP-triggered functions. The host invokes
// every function of the app by name on this one process, so they share its
// router: Handlers returns the handler of each by function name, built on
// the resolved Config (every default filled, the Processor's event budget
// and reader set).
type HTTPFunctions interface {
	Handlers(cfg Config) map[string]http.Handler
}

// NewServer returns the custom handler's HTTP handler.
func NewServer(cfg Config) http.Handler {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.MaxRequestBytes <= 0 {
		cfg.MaxRequestBytes = DefaultMaxRequestBytes
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.BatchParallelism <= 0 {
		cfg.BatchParallelism = DefaultBatchParallelism
	}
	if cfg.MaxBatchRequestBytes <= 0 {
		cfg.MaxBatchRequestBytes = DefaultMaxBatchRequestBytes
	}
	cfg.setClockDefaults()
	if cfg.Orders == nil {
		cfg.Orders, _ = cfg.Processor.Store.(orders.OrderReader)
	}
	cfg.fitOutput = OutputBudget(cfg.MaxMessageBytes)
	if cfg.Bodies == nil {
		cfg.Bodies, _ = cfg.Processor.Store.(BodyStore)
	}
	if cfg.Processor.EventBudget == nil || (cfg.Processor.Reader == nil && cfg.Orders != nil) {
		// A copy: the caller's Processor is not ours to change.
		p := *cfg.Processor
		if p.EventBudget == nil {
			p.EventBudget = func(e json.RawMessage) error { return cfg.fitOutput(e) }
		}
		if p.Reader == nil {
			p.Reader = cfg.Orders
		}
		cfg.Processor = &p
	}
	r := chi.NewRouter()
	r.Use(recoverer(cfg.Logger))
	// The host's readiness probe and health ping: answer at once, no I/O.
	r.Get("/", func(w http.ResponseWriter, _ *http.Request) {
		encode(w, cfg.Logger, http.StatusOK, map[string]string{"status": "ready"})
	})
	r.Post("/"+FunctionProcessOrder, handleProcessOrder(cfg))
	r.Post("/"+FunctionProcessOrderBatch, handleProcessOrderBatch(cfg))
	r.Post("/"+FunctionPublishOrderEvents, handlePublishOrderEvents(cfg))
	if cfg.HTTP != nil {
		// HTTP triggers are invoked by function name, not by their route.
		for name, h := range cfg.HTTP.Handlers(cfg) {
			r.Method(http.MethodPost, "/"+name, h)
		}
	}
	return r
}

// recoverer turns a panic into a failed invocation (the message is
// redelivered) instead of a crashed process.
func recoverer(log *slog.Logger) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			defer func() {
				if v := recover(); v != nil {
					if v == http.ErrAbortHandler {
						panic(v)
					}
					log.Error("panic in invocation", "path", r.URL.Path,
						"invocationId", r.Header.Get("X-Azure-Functions-InvocationId"), "panic", fmt.Sprint(v))
					encode(w, log, http.StatusInternalServerError, newResult())
				}
			}()
			next.ServeHTTP(w, r)
		})
	}
}
