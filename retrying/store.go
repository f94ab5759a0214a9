package retrying

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/ordersink/orders-consumer/orders"
)

// Store is an [orders.Store], [orders.StatusStore] and [orders.OrderReader] that retries transient
// failures until its context's deadline, which the caller sets below the
// platform clock the invocation lives under (docs/adr/0007-holding-through-outages.md). Every
// write it retries is idempotent by orderId, so a retry after an attempt
// whose answer was lost finds the order there: a duplicate, never a double.
// Pattern: Retry with back-off and deadline (docs/design-patterns.md#retry-with-back-off-and-deadline).
type Store struct {
	Store orders.Store
	// Statuses applies status changes; nil means Store, when it is one.
	Statuses orders.StatusStore
	// Health is shared by every invocation of the process; nil means a
	// health state of this Store's own.
	Health *Health
	// Backoff paces retries after failures that are answers (throttling, a
	// lost race); outages are paced by Health's probes.
	Backoff Backoff
	// AttemptTimeout bounds one attempt, so that a store that never answers
	// costs a retry rather than the whole deadline. Zero means none.
	AttemptTimeout time.Duration

	once sync.Once
}

// DefaultBackoff paces retries after an answer that asks for patience.
var DefaultBackoff = Backoff{Initial: 100 * time.Millisecond, Max: time.Second}

// CreateOrder is Store.CreateOrder, retried.
func (r *Store) CreateOrder(ctx context.Context, b *orders.AcceptanceBatch) (*orders.StoredFingerprint, error) {
	var stored *orders.StoredFingerprint
	err := r.do(ctx, "create order", b.OrderID, func(ctx context.Context) (err error) {
		stored, err = r.Store.CreateOrder(ctx, b)
		return err
	})
	return stored, err
}

// RecordConflict is Store.RecordConflict, retried.
func (r *Store) RecordConflict(ctx context.Context, c orders.Conflict) error {
	return r.do(ctx, "record conflict", c.OrderID, func(ctx context.Context) error {
		return r.Store.RecordConflict(ctx, c)
	})
}

// ApplyStatus is orders.StatusStore.ApplyStatus, retried.
func (r *Store) ApplyStatus(ctx context.Context, c orders.StatusChange, messageID string, at time.Time) (orders.StatusApplied, error) {
	store := r.Statuses
	if store == nil {
		store, _ = r.Store.(orders.StatusStore)
	}
	if store == nil {
		return orders.StatusApplied{}, &orders.StoreError{Op: "apply status", OrderID: c.OrderID, Err: fmt.Errorf("the store keeps no statuses")}
	}
	var applied orders.StatusApplied
	err := r.do(ctx, "apply status", c.OrderID, func(ctx context.Context) (err error) {
		applied, err = store.ApplyStatus(ctx, c, messageID, at)
		return err
	})
	return applied, err
}

// ReadOrder is orders.OrderReader.ReadOrder of Store, retried: the
// processor's look at the order stored under a refused body's orderId holds
// through an outage as the writes do, so an outage does not spend the
// refused message's retry budget and park it RetryBudgetExhausted instead
// of with its reason (or as the duplicate it may be). A Store that reads no
// orders fails for good.
func (r *Store) ReadOrder(ctx context.Context, orderID string) (json.RawMessage, error) {
	reader, _ := r.Store.(orders.OrderReader)
	if reader == nil {
		return nil, &orders.StoreError{Op: "read order", OrderID: orderID, Err: fmt.Errorf("the store reads no orders")}
	}
	var doc json.RawMessage
	err := r.do(ctx, "read order", orderID, func(ctx context.Context) (err error) {
		doc, err = reader.ReadOrder(ctx, orderID)
		return err
	})
	return doc, err
}

// do runs op until it succeeds, fails for good, or ctx ends; it returns the
// last error op gave, or, when op never ran, why.
func (r *Store) do(ctx context.Context, op, orderID string, attempt func(context.Context) error) error {
	h := r.health()
	var last error
	for failures := 0; ; failures++ {
		probe, err := h.wait(ctx)
		if err != nil {
			return r.gaveUp(op, orderID, last, err)
		}
		actx, cancel := r.attemptContext(ctx)
		err = attempt(actx)
		cancel()
		if err != nil && ctx.Err() != nil {
			// Cut by the invocation's own deadline: that says nothing
			// about the store.
			h.abandon(probe)
			return err
		}
		h.observe(probe, err)
		if err == nil || !orders.IsTransient(err) {
			return err
		}
		last = err
		if StoreDown(err) {
			continue // h paces the next attempt
		}
		if !sleep(ctx, r.backoff().Pause(failures)) {
			return last
		}
	}
}

// gaveUp is the error of an operation that ran out of time waiting for the
// store to come back.
func (r *Store) gaveUp(op, orderID string, last, waitErr error) error {
	if last != nil {
		return last
	}
	_, since := r.health().Down()
	return &orders.StoreError{Op: op, OrderID: orderID, IsTransient: true,
		Err: fmt.Errorf("not attempted: the store has been down since %s: %w", since.UTC().Format(time.RFC3339), waitErr)}
}

func (r *Store) attemptContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if r.AttemptTimeout <= 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, r.AttemptTimeout)
}

func (r *Store) health() *Health {
	r.once.Do(func() {
		if r.Health == nil {
			r.Health = &Health{}
		}
	})
	return r.Health
}

func (r *Store) backoff() Backoff {
	if r.Backoff.Initial <= 0 || r.Backoff.Max <= 0 {
		return DefaultBackoff
	}
	return r.Backoff
}

// sleep waits d unless ctx ends first; it reports whether d passed.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
