package handler

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/ordersink/orders-consumer/orders"
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
	// MaxRequestBytes bounds the request body read into memory; zero means
	// DefaultMaxRequestBytes.
	MaxRequestBytes int64
	// OperationTimeout bounds the store work of one message; zero means none
	// beyond the host's own timeout.
	OperationTimeout time.Duration
	// BatchParallelism bounds the messages of one batch processed at once;
	// zero means DefaultBatchParallelism.
	BatchParallelism int
	// MaxBatchRequestBytes bounds a batch or change feed invocation read
	// into memory; zero means DefaultMaxBatchRequestBytes.
	MaxBatchRequestBytes int64
	// Now returns the current time; nil means time.Now.
	Now func() time.Time
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
	r := chi.NewRouter()
	r.Use(recoverer(cfg.Logger))
	// The host's readiness probe and health ping: answer at once, no I/O.
	r.Get("/", func(w http.ResponseWriter, _ *http.Request) {
		encode(w, cfg.Logger, http.StatusOK, map[string]string{"status": "ready"})
	})
	r.Post("/"+FunctionProcessOrder, handleProcessOrder(cfg))
	r.Post("/"+FunctionProcessOrderBatch, handleProcessOrderBatch(cfg))
	r.Post("/"+FunctionPublishOrderEvents, handlePublishOrderEvents(cfg))
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

func (cfg Config) operationContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if cfg.OperationTimeout <= 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, cfg.OperationTimeout)
}
