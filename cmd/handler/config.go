package main

import (
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/kelseyhightower/envconfig"

	"github.com/ordersink/orders-consumer/cosmos"
	"github.com/ordersink/orders-consumer/handler"
	"github.com/ordersink/orders-consumer/httpapi"
	"github.com/ordersink/orders-consumer/idempotency"
	"github.com/ordersink/orders-consumer/internal/clocks"
	"github.com/ordersink/orders-consumer/orders"
	"github.com/ordersink/orders-consumer/retrying"
)

// config is read from the environment (app settings in Azure, Values in
// local.settings.json under Core Tools). Names follow docs/contract.md §2.
type config struct {
	Port            string `envconfig:"FUNCTIONS_CUSTOMHANDLER_PORT"`
	CosmosEndpoint  string `envconfig:"COSMOS_ENDPOINT" required:"true"`
	CosmosKey       string `envconfig:"COSMOS_KEY"`
	CosmosDatabase  string `envconfig:"COSMOS_DATABASE"`
	CosmosContainer string `envconfig:"COSMOS_CONTAINER"`
	// RetryBudget is the DeliveryCount from which a transient failure is
	// parked (RetryBudgetExhausted) rather than retried; keep it below the
	// queue's maxDeliveryCount.
	RetryBudget int `envconfig:"RETRY_BUDGET_DELIVERY_COUNT"`
	// MaxRequestBytes bounds one invocation request held in memory. A
	// request over it is failed (the message stays in the broker), so it
	// must exceed the largest message the queue takes, as the host encodes
	// it: about 14 times its size at worst for a string trigger.
	MaxRequestBytes int64 `envconfig:"MAX_REQUEST_BYTES"`
	// MaxMessageBytes is the Service Bus limit for one message (Standard's
	// by default; Premium up to 100 MB, as set on the entities). Every output
	// (parking envelope, event) is kept within it as the host sends it.
	MaxMessageBytes int `envconfig:"SERVICEBUS_MAX_MESSAGE_BYTES"`
	// OperationTimeout bounds one attempt of one Cosmos operation, SDK
	// retries included; past it the attempt is retried within the deadline.
	OperationTimeout time.Duration `envconfig:"COSMOS_OPERATION_TIMEOUT"`
	// MessageDeadline: how long a ProcessOrder invocation retries a
	// failing store before the message goes back to the broker.
	MessageDeadline time.Duration `envconfig:"MESSAGE_DEADLINE"`
	// BatchDeadline: the same for a whole ProcessOrderBatch invocation.
	BatchDeadline time.Duration `envconfig:"BATCH_DEADLINE"`
	// ProbeInterval: the longest pause between two probes of a store that
	// is down, and between two retries of one operation.
	ProbeInterval time.Duration `envconfig:"COSMOS_PROBE_INTERVAL"`
	// EasyAuth is set by the platform when App Service Authentication runs
	// in front of the app: only then do SubmitOrder and GetOrder take the
	// client from X-MS-CLIENT-PRINCIPAL-ID, which the platform then strips
	// from callers.
	EasyAuth bool `envconfig:"WEBSITE_AUTH_ENABLED"`
	// SubmitDeadline bounds a SubmitOrder or GetOrder invocation: the
	// caller has its answer by then. Below functionTimeout and the
	// idempotency lease, so that a live attempt is never taken over.
	SubmitDeadline time.Duration `envconfig:"SUBMIT_DEADLINE"`
	// AuthAlarmAfter: 401/403 answers that last longer are logged at ERROR.
	AuthAlarmAfter time.Duration `envconfig:"AUTH_ALARM_AFTER"`
	// Host holds the platform's clocks the deadlines must fit in.
	Host hostClocks
	// BatchParallelism bounds the messages of one ProcessOrderBatch
	// invocation processed at once; each holds a Cosmos connection, so it
	// may not exceed MaxConns.
	BatchParallelism int `envconfig:"BATCH_PARALLELISM"`
	// MaxBatchRequestBytes bounds one batch or change-feed invocation.
	MaxBatchRequestBytes int64 `envconfig:"MAX_BATCH_REQUEST_BYTES"`
	// MaxConns sizes the Cosmos connection pool (>= maxConcurrentCalls, and
	// >= BatchParallelism). Idle connections are only kept, never opened
	// ahead, so a large pool costs nothing to ProcessOrder.
	MaxConns int      `envconfig:"COSMOS_MAX_CONNS"`
	LogLevel logLevel `envconfig:"LOG_LEVEL"`
	// KeyContainer holds SubmitOrder's idempotency key records, apart from
	// the orders (cosmos.KeyStore says why).
	KeyContainer string `envconfig:"IDEMPOTENCY_CONTAINER"`
	// KeyTTL is how long a key's record lives after its last write: a
	// retry within it is answered from the record.
	KeyTTL time.Duration `envconfig:"IDEMPOTENCY_KEY_TTL"`
	// KeyLease is how long a request owns a key it claimed; after it,
	// another request with that key takes it over and runs the work again.
	KeyLease time.Duration `envconfig:"IDEMPOTENCY_LEASE"`
}

// DefaultConfig is the configuration with no setting given: each default
// is stated here once, a Go constant where the code beside it has one.
// loadConfig overrides what the environment sets: envconfig leaves the
// field of an unset variable alone, and reads one that is set, even to "".
func DefaultConfig() config {
	return config{
		Port:                 "8080",
		CosmosDatabase:       "shop",
		CosmosContainer:      "orders",
		RetryBudget:          orders.DefaultRetryBudget,
		MaxRequestBytes:      handler.DefaultMaxRequestBytes,
		MaxMessageBytes:      handler.DefaultMaxMessageBytes,
		OperationTimeout:     4 * time.Second,
		MessageDeadline:      handler.DefaultMessageDeadline,
		BatchDeadline:        handler.DefaultBatchDeadline,
		ProbeInterval:        retrying.DefaultProbeInterval,
		SubmitDeadline:       httpapi.DefaultSubmitDeadline,
		AuthAlarmAfter:       handler.DefaultAuthAlarmAfter,
		Host:                 hostClocks{HostJSON: "host.json", LockDuration: clocks.QueueLockDuration},
		BatchParallelism:     handler.DefaultBatchParallelism,
		MaxBatchRequestBytes: handler.DefaultMaxBatchRequestBytes,
		MaxConns:             100,
		LogLevel:             logLevel(slog.LevelInfo),
		KeyContainer:         cosmos.KeyContainer,
		KeyTTL:               idempotency.DefaultTTL,
		KeyLease:             idempotency.DefaultLease,
	}
}

func loadConfig() (config, error) {
	c := DefaultConfig()
	if err := envconfig.Process("", &c); err != nil {
		return c, fmt.Errorf("configuration: %w", err)
	}
	if err := cosmos.CheckEndpoint(c.CosmosEndpoint); err != nil {
		return c, fmt.Errorf("configuration: %w", err)
	}
	switch {
	case c.RetryBudget < 1:
		return c, fmt.Errorf("configuration: RETRY_BUDGET_DELIVERY_COUNT must be at least 1, got %d", c.RetryBudget)
	case c.MaxRequestBytes < 64<<10:
		return c, fmt.Errorf("configuration: MAX_REQUEST_BYTES must be at least 65536, got %d", c.MaxRequestBytes)
	case c.MaxMessageBytes < 64<<10:
		return c, fmt.Errorf("configuration: SERVICEBUS_MAX_MESSAGE_BYTES must be at least 65536, got %d", c.MaxMessageBytes)
	case c.MaxRequestBytes < 2*int64(c.MaxMessageBytes):
		// A request over the limit is failed, never judged: the largest
		// message must fit, as base64 (4/3) with its metadata.
		return c, fmt.Errorf("configuration: MAX_REQUEST_BYTES (%d) must be at least twice SERVICEBUS_MAX_MESSAGE_BYTES (%d): the largest message arrives base64-encoded with its metadata", c.MaxRequestBytes, c.MaxMessageBytes)
	case c.MaxConns < 1:
		return c, fmt.Errorf("configuration: COSMOS_MAX_CONNS must be at least 1, got %d", c.MaxConns)
	case c.BatchParallelism < 1:
		return c, fmt.Errorf("configuration: BATCH_PARALLELISM must be at least 1, got %d", c.BatchParallelism)
	case c.BatchParallelism > c.MaxConns:
		return c, fmt.Errorf("configuration: BATCH_PARALLELISM (%d) must not exceed COSMOS_MAX_CONNS (%d): every message of a batch in flight holds a Cosmos connection; lower BATCH_PARALLELISM or raise COSMOS_MAX_CONNS",
			c.BatchParallelism, c.MaxConns)
	case c.MaxBatchRequestBytes < c.MaxRequestBytes:
		return c, fmt.Errorf("configuration: MAX_BATCH_REQUEST_BYTES (%d) must be at least MAX_REQUEST_BYTES (%d)", c.MaxBatchRequestBytes, c.MaxRequestBytes)
	case c.CosmosDatabase == "" || c.CosmosContainer == "" || c.KeyContainer == "":
		return c, fmt.Errorf("configuration: COSMOS_DATABASE, COSMOS_CONTAINER and IDEMPOTENCY_CONTAINER must not be empty")
	}
	if err := clocks.KeyLifetime(c.KeyTTL, c.KeyLease); err != nil {
		return c, fmt.Errorf("configuration: %w", err)
	}
	if err := c.checkClocks(); err != nil {
		return c, fmt.Errorf("configuration: %w", err)
	}
	return c, nil
}

// keyService is SubmitOrder's executeOnce service over the key container of
// the Store's database, with the configured lease and TTL.
func (c config) keyService(store *cosmos.Store) (*idempotency.Service, error) {
	return idempotency.NewService(store.KeyStore(c.KeyContainer), c.KeyLease, c.KeyTTL)
}

// logLevel is LOG_LEVEL: one of debug, info, warn, error (any case).
// Anything else stops the handler at start, like every invalid setting: a
// misspelt "eror" silently logging at info would hide what it meant to show.
type logLevel slog.Level

// Decode implements envconfig.Decoder.
func (l *logLevel) Decode(s string) error {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "debug":
		*l = logLevel(slog.LevelDebug)
	case "info":
		*l = logLevel(slog.LevelInfo)
	case "warn":
		*l = logLevel(slog.LevelWarn)
	case "error":
		*l = logLevel(slog.LevelError)
	default:
		return fmt.Errorf("%q is not one of debug, info, warn, error", s)
	}
	return nil
}
