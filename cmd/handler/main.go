// Command handler is the Azure Functions custom handler that consumes order
// messages from Service Bus and writes them to Cosmos DB idempotently.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/ordersink/orders-consumer/cosmos"
	"github.com/ordersink/orders-consumer/handler"
	"github.com/ordersink/orders-consumer/httpapi"
	"github.com/ordersink/orders-consumer/orders"
	"github.com/ordersink/orders-consumer/retrying"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "handler:", err)
		os.Exit(1)
	}
}

// The network run serves on and reaches Cosmos DB through: the machine's, or
// in tests one in memory, whose connections let the program run on virtual
// time (testing/synctest); nil cosmosTransport is cosmos.Open's own.
var (
	listen          = net.Listen
	cosmosTransport http.RoundTripper
)

// run starts the handler and serves until ctx ends. Configuration comes from
// the environment.
func run(ctx context.Context, stdout io.Writer) error {
	cfg, err := loadConfig()
	if err != nil {
		return err
	}
	log := slog.New(slog.NewJSONHandler(stdout, &slog.HandlerOptions{Level: slog.Level(cfg.LogLevel)}))

	store, err := cosmos.Open(cosmos.Options{Endpoint: cfg.CosmosEndpoint, Key: cfg.CosmosKey, MaxConnsPerHost: cfg.MaxConns,
		Transport: cosmosTransport},
		cfg.CosmosDatabase, cfg.CosmosContainer)
	if err != nil {
		return err
	}
	// One health state for every invocation of the process (ADR 0007).
	health := &retrying.Health{ProbeInterval: cfg.ProbeInterval}
	held := &retrying.Store{Store: store, Health: health, AttemptTimeout: cfg.OperationTimeout,
		Backoff: retrying.Backoff{Initial: cfg.ProbeInterval / 10, Max: cfg.ProbeInterval}}
	keys, err := cfg.keyService(store)
	if err != nil {
		return err
	}
	srv := &http.Server{
		Handler: handler.NewServer(handler.Config{
			// A refused body's look at the stored order holds through an
			// outage as the writes do; GetOrder answers 503 at once instead.
			Processor:            &orders.Processor{Store: held, Reader: held, RetryBudget: cfg.RetryBudget},
			Bodies:               store,
			Orders:               store,
			HTTP:                 httpapi.Functions{Idempotency: keys, SubmitDeadline: cfg.SubmitDeadline, EasyAuth: cfg.EasyAuth},
			Logger:               log,
			MaxRequestBytes:      cfg.MaxRequestBytes,
			MaxMessageBytes:      cfg.MaxMessageBytes,
			MaxBatchRequestBytes: cfg.MaxBatchRequestBytes,
			BatchParallelism:     cfg.BatchParallelism,
			MessageDeadline:      cfg.MessageDeadline,
			BatchDeadline:        cfg.BatchDeadline,
			Health:               health,
			AuthAlarmAfter:       cfg.AuthAlarmAfter,
		}),
		ReadHeaderTimeout: 10 * time.Second,
		// Invocations held through an outage end with ctx: at shutdown they
		// answer 503 at once (the broker redelivers), instead of holding the
		// process past its shutdown grace.
		BaseContext: func(net.Listener) context.Context { return ctx },
	}
	// The host always dials 127.0.0.1; nothing else needs to reach us.
	ln, err := listen("tcp", net.JoinHostPort("127.0.0.1", cfg.Port))
	if err != nil {
		return fmt.Errorf("listen on FUNCTIONS_CUSTOMHANDLER_PORT %s: %w", cfg.Port, err)
	}
	auth := "Microsoft Entra ID"
	if cfg.CosmosKey != "" {
		auth = "account key (emulator)"
	}
	log.Info("listening", "addr", ln.Addr().String(), "cosmosEndpoint", cfg.CosmosEndpoint,
		"database", cfg.CosmosDatabase, "container", cfg.CosmosContainer, "auth", auth,
		"messageDeadline", cfg.MessageDeadline.String(), "batchDeadline", cfg.BatchDeadline.String(),
		"submitDeadline", cfg.SubmitDeadline.String(), "keyContainer", cfg.KeyContainer, "keyLease", cfg.KeyLease.String(),
		"functionTimeout", cfg.Host.FunctionTimeout.String(), "maxAutoLockRenewal", cfg.Host.LockRenewal.String(),
		"queueLockDuration", cfg.Host.LockDuration.String(), "toleratedOutage", cfg.tolerated().String())

	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	// Let in-flight invocations finish: an answer that never reaches the host
	// only costs a redelivery, but a finished write is cheaper to confirm.
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("shutdown: %w", err)
	}
	log.Info("stopped")
	return nil
}
