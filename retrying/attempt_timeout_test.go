package retrying

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ordersink/orders-consumer/orders"
)

// hangingOnce is a store whose first create is never answered (it ends
// with its context) and whose later creates succeed.
type hangingOnce struct{ calls atomic.Int32 }

func (s *hangingOnce) CreateOrder(ctx context.Context, b *orders.AcceptanceBatch) (*orders.StoredFingerprint, error) {
	if s.calls.Add(1) == 1 {
		<-ctx.Done()
		return nil, &orders.StoreError{Op: "create order", OrderID: b.OrderID, IsTransient: true, Err: ctx.Err()}
	}
	return nil, nil
}

func (s *hangingOnce) RecordConflict(context.Context, orders.Conflict) error { return nil }

// TestRetryingCutsAHungAttempt: AttemptTimeout (COSMOS_OPERATION_TIMEOUT)
// ends an attempt the store never answers, and the next attempt runs; with
// none, the hung attempt lasts until the caller's deadline.
func TestRetryingCutsAHungAttempt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const deadline = 500 * time.Millisecond
		for _, tc := range []struct {
			attempt time.Duration
			created bool
		}{
			{50 * time.Millisecond, true},
			{0, false},
		} {
			store := &hangingOnce{}
			r := &Store{Store: store, Health: &Health{ProbeInterval: 20 * time.Millisecond}, AttemptTimeout: tc.attempt}
			ctx, cancel := context.WithTimeout(context.Background(), deadline)
			_, err := r.CreateOrder(ctx, testOrder("ORD-1"))
			cancel()
			if (err == nil) != tc.created {
				t.Errorf("AttemptTimeout %s: %v after %d attempts; want created: %v", tc.attempt, err, store.calls.Load(), tc.created)
			}
			if want := map[bool]int32{true: 2, false: 1}[tc.created]; store.calls.Load() != want {
				t.Errorf("AttemptTimeout %s: %d attempts within the %s deadline, want %d", tc.attempt, store.calls.Load(), deadline, want)
			}
		}
	})
}

// hanging is a store that never answers: every create ends with its context.
type hanging struct{}

func (hanging) CreateOrder(ctx context.Context, b *orders.AcceptanceBatch) (*orders.StoredFingerprint, error) {
	<-ctx.Done()
	return nil, &orders.StoreError{Op: "create order", OrderID: b.OrderID, IsTransient: true, Err: ctx.Err()}
}

func (hanging) RecordConflict(context.Context, orders.Conflict) error { return nil }

// TestInvocationDeadlineSaysNothingOfTheStore: an attempt cut by the
// invocation's own deadline (no AttemptTimeout) does not mark the store
// down: other invocations are not held for it.
func TestInvocationDeadlineSaysNothingOfTheStore(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := &Health{ProbeInterval: 20 * time.Millisecond}
		r := &Store{Store: hanging{}, Health: h}
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		if _, err := r.CreateOrder(ctx, testOrder("ORD-1")); err == nil {
			t.Fatal("a store that never answers: no error")
		}
		if down, _ := h.Down(); down {
			t.Error("the store is marked down after an attempt cut by the invocation's deadline")
		}
	})
}
