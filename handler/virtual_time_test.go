package handler

// What the tests on virtual time (testing/synctest) share: the handler
// served on a network in memory inside the bubble, a store double that
// Cosmos DB's outages can be switched on, and the production wiring of
// cmd/handler around it. The bubble's clock moves only while every
// goroutine in it waits, so deadlines of minutes are met exactly, in
// milliseconds, however loaded the machine.

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ordersink/orders-consumer/cosmos/cosmostest"
	"github.com/ordersink/orders-consumer/handler/handlertest"
	"github.com/ordersink/orders-consumer/orders"
	"github.com/ordersink/orders-consumer/orders/orderstest"
	"github.com/ordersink/orders-consumer/retrying"
)

// startServerIn serves cfg on a network in memory; the test must run in a
// synctest bubble (handlertest.StartIn).
func startServerIn(t *testing.T, cfg Config) *testServer {
	t.Helper()
	return &testServer{handlertest.StartIn(t, func(log *slog.Logger) http.Handler {
		cfg.Logger = log
		return NewServer(cfg)
	})}
}

// The production clocks of cmd/handler's defaults around a store:
// COSMOS_PROBE_INTERVAL and COSMOS_OPERATION_TIMEOUT.
const (
	prodProbeInterval    = retrying.DefaultProbeInterval
	prodOperationTimeout = 4 * time.Second
)

// productionWiring is cmd/handler's wiring around store, with its default
// clocks: one Health for every invocation, a retrying.Store. Unset
// deadlines of cfg take their defaults when it is served.
func productionWiring(store orders.Store) Config {
	health := &retrying.Health{ProbeInterval: prodProbeInterval}
	held := &retrying.Store{Store: store, Health: health,
		AttemptTimeout: prodOperationTimeout, Backoff: retrying.Backoff{Initial: prodProbeInterval / 10, Max: prodProbeInterval}}
	reader, _ := store.(orders.OrderReader)
	return Config{Health: health, Processor: &orders.Processor{Store: held, Reader: held}, Orders: reader}
}

// outageStore is an orderstest.MemStore behind a switch: while Fault is not
// cosmostest.Up, every call fails as that outage makes Cosmos DB fail.
type outageStore struct {
	*orderstest.MemStore
	fault atomic.Int32
}

func newOutageStore(f cosmostest.Fault) *outageStore {
	s := &outageStore{MemStore: orderstest.NewMemStore()}
	s.Set(f)
	return s
}

// Set changes the fault for the calls that follow.
func (s *outageStore) Set(f cosmostest.Fault) { s.fault.Store(int32(f)) }

// refusal is how long a refused connection takes to fail.
const refusal = time.Millisecond

func (s *outageStore) outage(ctx context.Context, op, orderID string) error {
	switch cosmostest.Fault(s.fault.Load()) {
	case cosmostest.Refused:
		time.Sleep(refusal)
		return &orders.StoreError{Op: op, OrderID: orderID, IsTransient: true, Err: errRefused}
	case cosmostest.Forbidden:
		return &orders.StoreError{Op: op, OrderID: orderID, Status: http.StatusForbidden, SubStatus: 5301, IsTransient: true, Err: errForbidden}
	case cosmostest.Silent:
		<-ctx.Done()
		return &orders.StoreError{Op: op, OrderID: orderID, IsTransient: true, Err: ctx.Err()}
	}
	return nil
}

func (s *outageStore) CreateOrder(ctx context.Context, b *orders.AcceptanceBatch) (*orders.StoredFingerprint, error) {
	if err := s.outage(ctx, "create order", b.OrderID); err != nil {
		return nil, err
	}
	return s.MemStore.CreateOrder(ctx, b)
}

func (s *outageStore) RecordConflict(ctx context.Context, c orders.Conflict) error {
	if err := s.outage(ctx, "record conflict", c.OrderID); err != nil {
		return err
	}
	return s.MemStore.RecordConflict(ctx, c)
}

func (s *outageStore) ReadOrder(ctx context.Context, orderID string) (json.RawMessage, error) {
	if err := s.outage(ctx, "read order", orderID); err != nil {
		return nil, err
	}
	return s.MemStore.ReadOrder(ctx, orderID)
}

var (
	errRefused   = errors.New("dial tcp 127.0.0.1:8081: connect: connection refused")
	errForbidden = errors.New("403 Forbidden: Request blocked by Auth (test)")
)
