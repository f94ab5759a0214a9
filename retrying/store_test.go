package retrying

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ordersink/orders-consumer/orders"
)

// outageStore answers like a store behind a switch: while down it fails every
// create with status (0: no answer), and it counts how many requests reach
// it at once.
type outageStore struct {
	down     atomic.Bool
	status   int
	inflight atomic.Int32
	maxDown  atomic.Int32 // most concurrent requests seen while down
	calls    atomic.Int32
	created  sync.Map
}

func (s *outageStore) CreateOrder(ctx context.Context, b *orders.AcceptanceBatch) (*orders.StoredFingerprint, error) {
	s.calls.Add(1)
	n := s.inflight.Add(1)
	defer s.inflight.Add(-1)
	if s.down.Load() {
		for m := s.maxDown.Load(); n > m && !s.maxDown.CompareAndSwap(m, n); m = s.maxDown.Load() {
		}
		time.Sleep(refusal)
		return nil, &orders.StoreError{Op: "create order", OrderID: b.OrderID, Status: s.status, IsTransient: true, Err: errors.New("down")}
	}
	if _, loaded := s.created.LoadOrStore(b.OrderID, true); loaded {
		return &orders.StoredFingerprint{Hash: "sha256:x", Version: orders.HashVersion}, nil
	}
	return nil, nil
}

// refusal is how long a store that is down takes to fail a request: a
// refused connection is not instant.
const refusal = 2 * time.Millisecond

func (s *outageStore) RecordConflict(context.Context, orders.Conflict) error { return nil }

func testOrder(id string) *orders.AcceptanceBatch { return &orders.AcceptanceBatch{OrderID: id} }

// Concurrent invocations held through an outage reach the store one at a
// time (the probe), and are all released together once it answers: within
// one probe interval, and the refusal of a probe already on its way. On
// virtual time (testing/synctest), so the bounds are exact on any machine.
func TestRetryingHoldsThroughAnOutageWithOneProbe(t *testing.T) {
	for _, status := range []int{0, http.StatusForbidden, http.StatusServiceUnavailable} {
		t.Run(fmt.Sprintf("status %d", status), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				store := &outageStore{status: status}
				store.down.Store(true)
				h := &Health{ProbeInterval: 50 * time.Millisecond}
				r := &Store{Store: store, Health: h}
				const n = 16
				done := make(chan time.Time, n)
				errs := make(chan error, n)
				for i := range n {
					go func() {
						ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
						defer cancel()
						_, err := r.CreateOrder(ctx, testOrder(string(rune('A'+i))))
						errs <- err
						done <- time.Now()
					}()
				}
				// The first attempts go out together, before anyone knows the
				// store is down; count what follows.
				time.Sleep(100 * time.Millisecond)
				store.maxDown.Store(0)
				before := store.calls.Load()
				time.Sleep(400 * time.Millisecond)
				if down, _ := h.Down(); !down {
					t.Fatal("the health state did not go down")
				}
				probes := store.calls.Load() - before
				back := time.Now()
				store.down.Store(false)
				var last time.Time
				for range n {
					if err := <-errs; err != nil {
						t.Errorf("held invocation failed: %v", err)
					}
					if d := <-done; d.After(last) {
						last = d
					}
				}
				if m := store.maxDown.Load(); m > 1 {
					t.Errorf("%d requests reached the store at once while it was down, want one probe at a time", m)
				}
				// Probes come at most every ProbeInterval/2 (jitter), plus the
				// ramp from a tenth of it.
				if probes > 400/25+5 {
					t.Errorf("%d requests in 400ms of outage: the held invocations hammered the store", probes)
				}
				if took := last.Sub(back); took > h.ProbeInterval+refusal {
					t.Errorf("released %s after the store came back, want within one probe interval (%s)", took, h.ProbeInterval)
				}
			})
		})
	}
}

// TestRetryingGivesUpAtTheDeadline: retries end at the caller's deadline,
// or as the attempt on its way then fails, with the store's last error.
func TestRetryingGivesUpAtTheDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := &outageStore{status: http.StatusServiceUnavailable}
		store.down.Store(true)
		r := &Store{Store: store, Health: &Health{ProbeInterval: 20 * time.Millisecond}}
		const deadline = 300 * time.Millisecond
		ctx, cancel := context.WithTimeout(context.Background(), deadline)
		defer cancel()
		start := time.Now()
		_, err := r.CreateOrder(ctx, testOrder("ORD-1"))
		var se *orders.StoreError
		if !errors.As(err, &se) || !se.Transient() || se.Status != http.StatusServiceUnavailable {
			t.Fatalf("err = %v, want the store's last transient error", err)
		}
		if took := time.Since(start); took < deadline || took > deadline+refusal {
			t.Errorf("gave up after %s, want at the %s deadline", took, deadline)
		}
		if store.calls.Load() < 3 {
			t.Errorf("%d attempts within the deadline, want retries", store.calls.Load())
		}
	})
}

// A waiter that never got to try says why, naming the operation and order.
func TestRetryingNotAttemptedWhileDown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := &outageStore{status: 0}
		h := &Health{ProbeInterval: time.Hour}
		h.observe(false, &orders.StoreError{IsTransient: true, Err: errors.New("refused")})
		r := &Store{Store: store, Health: h}
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		// The first probe is due within a tenth of the interval, so hold it.
		h.mu.Lock()
		h.probing = true
		h.mu.Unlock()
		_, err := r.CreateOrder(ctx, testOrder("ORD-7"))
		if err == nil || !orders.IsTransient(err) || store.calls.Load() != 0 {
			t.Fatalf("err = %v, calls %d", err, store.calls.Load())
		}
		if want := "create order ORD-7: not attempted: the store has been down since"; len(err.Error()) < len(want) || err.Error()[:len(want)] != want {
			t.Errorf("err = %q", err)
		}
	})
}

// TestRetryingReturnsFinalErrorsAtOnce: an error no retry can mend is
// returned after one call. Virtual time and a deadline keep a store that
// retried it like a transient one from looping until the package times
// out: the test then fails at once, with the calls it made.
func TestRetryingReturnsFinalErrorsAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		final := &orders.StoreError{Op: "create order", OrderID: "ORD-1", Status: http.StatusRequestEntityTooLarge, Err: errors.New("too large")}
		calls := 0
		r := &Store{Store: storeFunc(func() error { calls++; return final })}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		start := time.Now()
		_, err := r.CreateOrder(ctx, testOrder("ORD-1"))
		if !errors.Is(err, final) || calls != 1 || time.Since(start) != 0 {
			t.Errorf("err = %v after %d calls in %s, want the final error after one call at once", err, calls, time.Since(start))
		}
	})
}

// TestRetryingBacksOffAfterThrottling: an answer that asks for patience
// (429: the store is up) is retried after pauses that double from
// Backoff.Initial up to its Max, each between half and all of its ceiling.
func TestRetryingBacksOffAfterThrottling(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		throttled := &orders.StoreError{Op: "create order", OrderID: "ORD-1", Status: http.StatusTooManyRequests, IsTransient: true, Err: errors.New("429")}
		b := Backoff{Initial: 100 * time.Millisecond, Max: 800 * time.Millisecond}
		var at []time.Time
		r := &Store{Backoff: b, Store: storeFunc(func() error {
			if at = append(at, time.Now()); len(at) == 7 {
				return nil
			}
			return throttled
		})}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if _, err := r.CreateOrder(ctx, testOrder("ORD-1")); err != nil || len(at) != 7 {
			t.Fatalf("err = %v after %d calls, want created at the 7th", err, len(at))
		}
		for i := 1; i < len(at); i++ {
			ceiling := min(b.Initial<<(i-1), b.Max)
			if d := at[i].Sub(at[i-1]); d < ceiling/2 || d > ceiling {
				t.Errorf("pause %d: %s, want within [%s, %s]", i, d, ceiling/2, ceiling)
			}
		}
	})
}

type storeFunc func() error

func (f storeFunc) CreateOrder(context.Context, *orders.AcceptanceBatch) (*orders.StoredFingerprint, error) {
	return nil, f()
}
func (f storeFunc) RecordConflict(context.Context, orders.Conflict) error { return f() }

func TestStoreDown(t *testing.T) {
	for _, tc := range []struct {
		status    int
		transient bool
		want      bool
	}{
		{0, true, true}, {401, true, true}, {403, true, true}, {408, true, true}, {500, true, true}, {503, true, true},
		{429, true, false}, {404, true, false}, {412, true, false}, {400, false, false}, {413, false, false},
	} {
		err := &orders.StoreError{Status: tc.status, IsTransient: tc.transient, Err: errors.New("x")}
		if got := StoreDown(err); got != tc.want {
			t.Errorf("StoreDown(%d) = %v, want %v", tc.status, got, tc.want)
		}
	}
	if StoreDown(nil) || !StoreDown(context.DeadlineExceeded) {
		t.Error("nil is not down; an error without a status is")
	}
}

func TestBackoffPause(t *testing.T) {
	b := Backoff{Initial: 100 * time.Millisecond, Max: time.Second}
	for f := range 10 {
		ceiling := min(b.Initial<<f, b.Max)
		for range 50 {
			if d := b.Pause(f); d < ceiling/2 || d > ceiling {
				t.Fatalf("Pause(%d) = %s, want within [%s, %s]", f, d, ceiling/2, ceiling)
			}
		}
	}
}
