package idemtest

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/ordersink/orders-consumer/idempotency"
)

// testTakeOverStartsAFreshLease: attempt A dies holding the key; once its
// lease has ended, B takes the key over and is still running. A request
// that comes before B's own lease ends is in flight (told to come back when
// B's lease ends) and runs nothing; only after B's lease is the key taken
// over again. A take-over that kept the dead attempt's lease would let every
// retry take the key over at once, each running the work beside the others.
func testTakeOverStartsAFreshLease(t *testing.T, h *harness) {
	_, err := h.execute(t, h.fp, func(context.Context) (idempotency.Response, error) {
		h.dying.dead.Store(true)
		return idempotency.Response{}, errDied
	})
	if !errors.Is(err, errDied) {
		t.Fatalf("execute of a dying worker: %v; want its error", err)
	}
	h.dying.dead.Store(false)
	h.clock.Advance(Lease)

	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	open := func() { once.Do(func() { close(release) }) }
	t.Cleanup(open) // B never outlives a step that failed
	type outcome struct {
		res idempotency.Execution
		err error
	}
	doneB := make(chan outcome, 1)
	go func() {
		res, err := h.execute(t, h.fp, func(ctx context.Context) (idempotency.Response, error) {
			close(entered)
			select {
			case <-release:
			case <-ctx.Done():
				return idempotency.Response{}, ctx.Err()
			}
			return h.createOrder(ctx)
		})
		doneB <- outcome{res, err}
	}()
	select {
	case <-entered:
	case b := <-doneB:
		t.Fatalf("B, after A's lease: %+v, %v; want it to take the key over and run", b.res, b.err)
	}

	h.clock.Advance(Lease - 30*time.Second)
	res, err := h.execute(t, h.fp, h.createOrder)
	h.want(t, res, err, idempotency.InFlight, idempotency.Response{})
	if res.RetryAfter != 30*time.Second {
		t.Errorf("in flight: Retry-After %s, want the 30 s left of B's lease", res.RetryAfter)
	}
	h.clock.Advance(30*time.Second - time.Millisecond)
	res, err = h.execute(t, h.fp, h.createOrder)
	h.want(t, res, err, idempotency.InFlight, idempotency.Response{})
	h.wantRuns(t, 0)

	h.clock.Advance(time.Millisecond)
	res, err = h.execute(t, h.fp, h.createOrder)
	h.want(t, res, err, idempotency.Executed, h.accepted())
	if !res.TookOver {
		t.Error("the take-over after B's lease is not reported")
	}
	open()
	if b := <-doneB; !errors.Is(b.err, idempotency.ErrFenced) {
		t.Errorf("B's completion after its key was taken over: %+v, %v; want ErrFenced", b.res, b.err)
	}
	h.wantOrders(t, 1)
}
