package main

import (
	"fmt"
	"time"

	"github.com/kelseyhightower/envconfig"

	"github.com/ordersink/orders-consumer/cosmos"
)

// config is read from the environment (app settings in Azure, Values in
// local.settings.json under Core Tools). Names follow docs/contract.md §2.
type config struct {
	Port            string `envconfig:"FUNCTIONS_CUSTOMHANDLER_PORT" default:"8080"`
	CosmosEndpoint  string `envconfig:"COSMOS_ENDPOINT" required:"true"`
	CosmosKey       string `envconfig:"COSMOS_KEY"`
	CosmosDatabase  string `envconfig:"COSMOS_DATABASE" default:"shop"`
	CosmosContainer string `envconfig:"COSMOS_CONTAINER" default:"orders"`
	// RetryBudget is the DeliveryCount from which a transient failure is
	// parked (RetryBudgetExhausted) rather than retried; keep it below the
	// queue's maxDeliveryCount.
	RetryBudget int `envconfig:"RETRY_BUDGET_DELIVERY_COUNT" default:"9"`
	// MaxRequestBytes bounds one invocation request held in memory.
	MaxRequestBytes int64 `envconfig:"MAX_REQUEST_BYTES" default:"4194304"`
	// OperationTimeout bounds one attempt of one Cosmos operation, SDK
	// retries included; past it the attempt is retried within the deadline.
	OperationTimeout time.Duration `envconfig:"COSMOS_OPERATION_TIMEOUT" default:"4s"`
	// MessageDeadline: how long a ProcessOrder invocation retries a
	// failing store before the message goes back to the broker.
	MessageDeadline time.Duration `envconfig:"MESSAGE_DEADLINE" default:"4m"`
	// BatchDeadline: the same for a whole ProcessOrderBatch invocation.
	BatchDeadline time.Duration `envconfig:"BATCH_DEADLINE" default:"40s"`
	// ProbeInterval: the longest pause between two probes of a store that
	// is down, and between two retries of one operation.
	ProbeInterval time.Duration `envconfig:"COSMOS_PROBE_INTERVAL" default:"1s"`
	// AuthAlarmAfter: 401/403 answers that last longer are logged at ERROR.
	AuthAlarmAfter time.Duration `envconfig:"AUTH_ALARM_AFTER" default:"1m"`
	// Host holds the platform's clocks the deadlines must fit in.
	Host hostClocks
	// BatchParallelism bounds the messages of one ProcessOrderBatch
	// invocation processed at once.
	BatchParallelism int `envconfig:"BATCH_PARALLELISM" default:"8"`
	// MaxBatchRequestBytes bounds one batch or change-feed invocation.
	MaxBatchRequestBytes int64 `envconfig:"MAX_BATCH_REQUEST_BYTES" default:"67108864"`
	// MaxConns sizes the Cosmos connection pool (>= maxConcurrentCalls).
	MaxConns int    `envconfig:"COSMOS_MAX_CONNS" default:"64"`
	LogLevel string `envconfig:"LOG_LEVEL" default:"info"`
}

func loadConfig() (config, error) {
	var c config
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
	case c.BatchParallelism < 1:
		return c, fmt.Errorf("configuration: BATCH_PARALLELISM must be at least 1, got %d", c.BatchParallelism)
	case c.MaxBatchRequestBytes < c.MaxRequestBytes:
		return c, fmt.Errorf("configuration: MAX_BATCH_REQUEST_BYTES (%d) must be at least MAX_REQUEST_BYTES (%d)", c.MaxBatchRequestBytes, c.MaxRequestBytes)
	case c.CosmosDatabase == "" || c.CosmosContainer == "":
		return c, fmt.Errorf("configuration: COSMOS_DATABASE and COSMOS_CONTAINER must not be empty")
	}
	if err := c.checkClocks(); err != nil {
		return c, fmt.Errorf("configuration: %w", err)
	}
	return c, nil
}
