package handler

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ordersink/orders-consumer/orders"
	"github.com/ordersink/orders-consumer/orders/orderstest"
)

// gateStore holds every CreateOrder until want of them are in flight at
// once, then lets them all go, and records the most it saw in flight. A
// batch written with less concurrency than want never opens the gate: its
// creates give up after the gate's deadline, transiently, and the batch
// answers 503.
type gateStore struct {
	*orderstest.MemStore
	want     int
	deadline time.Duration

	mu       sync.Mutex
	inFlight int
	peak     int
	open     chan struct{}
	opened   bool
}

func newGateStore(want int) *gateStore {
	return &gateStore{MemStore: orderstest.NewMemStore(), want: want, deadline: 10 * time.Second, open: make(chan struct{})}
}

func (g *gateStore) CreateOrder(ctx context.Context, b *orders.AcceptanceBatch) (*orders.StoredFingerprint, error) {
	g.mu.Lock()
	g.inFlight++
	g.peak = max(g.peak, g.inFlight)
	if g.inFlight == g.want && !g.opened {
		close(g.open)
		g.opened = true
	}
	g.mu.Unlock()
	defer func() {
		g.mu.Lock()
		g.inFlight--
		g.mu.Unlock()
	}()
	select {
	case <-g.open:
		return g.MemStore.CreateOrder(ctx, b)
	case <-time.After(g.deadline):
		return nil, &orders.StoreError{Op: "create order", OrderID: b.OrderID, IsTransient: true,
			Err: fmt.Errorf("gate: fewer than %d creates in flight after %s", g.want, g.deadline)}
	}
}

func (g *gateStore) Peak() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.peak
}

// TestBatchIsWrittenAsWideAsItAllows: every message of a batch is its own
// partition, so a batch has all its messages in flight at once, up to
// BatchParallelism, and never more.
func TestBatchIsWrittenAsWideAsItAllows(t *testing.T) {
	tests := []struct {
		name        string
		messages    int
		parallelism int // 0: the default
		want        int
	}{
		{"a batch of 100 uses the default width", 100, 0, DefaultBatchParallelism},
		{"a batch smaller than the width has every message in flight", 10, 0, 10},
		{"the setting bounds a batch", 100, 16, 16},
		{"one at a time", 5, 1, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			store := newGateStore(tc.want)
			s := startBatchServer(t, store, tc.parallelism)
			msgs := make([]batchMessage, tc.messages)
			for i := range msgs {
				id := fmt.Sprintf("ORD-WIDTH-%d-%03d", tc.want, i)
				msgs[i] = batchMessage{[]byte(strings.Replace(orderstest.ExampleBody, "ORD-2026-000123", id, 1)), id, 1, ""}
			}
			a := s.invokeFunction(t, FunctionProcessOrderBatch, hostBatch(msgs))
			if a.Status != http.StatusOK {
				t.Fatalf("status %d: the batch never had %d creates in flight (peak %d)", a.Status, tc.want, store.Peak())
			}
			if got := store.Peak(); got != tc.want {
				t.Errorf("peak %d creates in flight, want %d", got, tc.want)
			}
			if n := store.Orders(); n != tc.messages {
				t.Errorf("%d orders stored, want %d", n, tc.messages)
			}
		})
	}
}

// The gate itself must fail a batch that is narrower than asked, or the
// test above proves nothing.
func TestGateStoreFailsANarrowBatch(t *testing.T) {
	store := newGateStore(3)
	store.deadline = 50 * time.Millisecond
	s := startBatchServer(t, store, 2)
	msgs := make([]batchMessage, 3)
	for i := range msgs {
		id := fmt.Sprintf("ORD-NARROW-%d", i)
		msgs[i] = batchMessage{[]byte(strings.Replace(orderstest.ExampleBody, "ORD-2026-000123", id, 1)), id, 1, ""}
	}
	a := s.invokeFunction(t, FunctionProcessOrderBatch, hostBatch(msgs))
	if a.Status != http.StatusServiceUnavailable {
		t.Fatalf("status %d, want 503 from a gate that never opened", a.Status)
	}
}
