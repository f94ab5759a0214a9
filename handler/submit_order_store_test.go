package handler

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ordersink/orders-consumer/idempotency"
	"github.com/ordersink/orders-consumer/idempotency/idemtest"
	"github.com/ordersink/orders-consumer/orders"
)

// gatedKeys holds the completion of every key (a Replace to Succeeded)
// until open is closed, so a test can send requests while the first one is
// in flight.
type gatedKeys struct {
	keyStore
	entered chan struct{}
	open    chan struct{}
}

func (g *gatedKeys) Replace(ctx context.Context, r idempotency.Record, etag string) (string, error) {
	if r.State == idempotency.Succeeded {
		g.entered <- struct{}{}
		<-g.open
	}
	return g.keyStore.Replace(ctx, r, etag)
}

func TestSubmitOrderWhileTheFirstIsInFlight(t *testing.T) {
	var gate *gatedKeys
	d := startFrontDoor(t, func(c *Config) {
		gate = &gatedKeys{keyStore: c.Submissions.(keyStore), entered: make(chan struct{}, 1), open: make(chan struct{})}
		c.Idempotency = &idempotency.Service{Store: gate, Lease: 30 * time.Second}
	})
	id, body := uniqueOrder(t)
	key := "in-flight-" + id
	firstDone := make(chan callerAnswer, 1)
	go func() {
		raw, err := d.testServer.call(FunctionSubmitOrder, hostHTTPInvocation(FunctionSubmitOrder, submitCall(key, body)))
		c, derr := decodeCallerAnswer(raw)
		if err != nil || derr != nil {
			t.Error(err, derr)
		}
		firstDone <- c
	}()
	<-gate.entered

	a := d.submit(t, key, body)
	wantProblem(t, a, http.StatusConflict, "request-in-progress")
	if s, err := strconv.Atoi(a.Header.Get("Retry-After")); err != nil || s < 1 || s > 30 {
		t.Errorf("Retry-After %q, want 1 to 30 seconds (the lease)", a.Header.Get("Retry-After"))
	}
	// Another payload is refused even while the first runs.
	_, other := uniqueOrder(t)
	wantProblem(t, d.submit(t, key, other), http.StatusUnprocessableEntity, "idempotency-key-reused")
	// Nothing is sent before the answer: GET does not say submitted yet.
	wantProblem(t, d.get(t, id, nil), http.StatusNotFound, "order-not-found")

	close(gate.open)
	first := <-firstDone
	if first.StatusCode != http.StatusAccepted {
		t.Fatalf("first: %d %s", first.StatusCode, first.Body)
	}
	if again := d.submit(t, key, body); again.StatusCode != http.StatusAccepted || again.Header.Get(headerReplayed) != "true" || string(again.Body) != string(first.Body) {
		t.Errorf("after the first finished: %d %s", again.StatusCode, again.Body)
	}
	if s := decodeState(t, d.get(t, id, nil)); s.State != "submitted" {
		t.Errorf("GET after the 202: %+v", s)
	}
}

// failingKeys is a key store whose claims fail with err, or, when hang is
// set, wait for the request's deadline as a store that stopped answering.
type failingKeys struct {
	keyStore
	err  error
	hang bool
}

func (f failingKeys) Claim(ctx context.Context, r idempotency.Record) (string, error) {
	if f.hang {
		<-ctx.Done()
		return "", &orders.StoreError{Op: "claim idempotency key", OrderID: r.ID, Transient: true, Err: ctx.Err()}
	}
	return "", f.err
}

func TestSubmitOrderStoreFailures(t *testing.T) {
	for _, tc := range []struct {
		name   string
		keys   func(keyStore) failingKeys
		status int
		anchor string
	}{
		{"throttled or down", func(k keyStore) failingKeys {
			return failingKeys{keyStore: k, err: &orders.StoreError{Op: "claim idempotency key", Status: 503, Transient: true,
				Err: errors.New("503 Service Unavailable: sekrit (activity 5e1f)")}}
		}, 503, "service-unavailable"},
		{"no answer", func(k keyStore) failingKeys {
			return failingKeys{keyStore: k, err: &orders.StoreError{Op: "claim idempotency key", Transient: true, Err: errors.New("dial tcp: sekrit refused")}}
		}, 503, "service-unavailable"},
		{"refused for good", func(k keyStore) failingKeys {
			return failingKeys{keyStore: k, err: &orders.StoreError{Op: "claim idempotency key", Status: 400, Err: errors.New("400 Bad Request: sekrit")}}
		}, 500, "internal-error"},
		{"fenced", func(k keyStore) failingKeys {
			return failingKeys{keyStore: k, err: errors.Join(errors.New("sekrit"), idempotency.ErrFenced)}
		}, 409, "request-in-progress"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := startFrontDoor(t, func(c *Config) {
				c.Idempotency = &idempotency.Service{Store: tc.keys(c.Submissions.(keyStore))}
			})
			id, body := uniqueOrder(t)
			a := d.submit(t, "k-"+id, body)
			p := wantProblem(t, a, tc.status, tc.anchor)
			if s, err := strconv.Atoi(a.Header.Get("Retry-After")); err != nil || s < 1 {
				t.Errorf("Retry-After %q", a.Header.Get("Retry-After"))
			}
			if !strings.Contains(p.Detail, "same Idempotency-Key and payload") {
				t.Errorf("detail %q does not tell how to retry", p.Detail)
			}
			if log := d.logsOf(a.answer); !strings.Contains(log, "sekrit") {
				t.Errorf("the log lacks the store's error: %s", log)
			}
		})
	}
}

func TestSubmitOrderAnswersBeforeItsDeadline(t *testing.T) {
	const deadline = 300 * time.Millisecond
	d := startFrontDoor(t, func(c *Config) {
		c.SubmitDeadline = deadline
		c.Idempotency = &idempotency.Service{Store: failingKeys{keyStore: c.Submissions.(keyStore), hang: true}}
	})
	id, body := uniqueOrder(t)
	start := time.Now()
	a := d.submit(t, "k-"+id, body)
	took := time.Since(start)
	wantProblem(t, a, http.StatusServiceUnavailable, "service-unavailable")
	if took < deadline || took > deadline+2*time.Second {
		t.Errorf("answered after %s, want just after the deadline of %s", took, deadline)
	}
}

// dyingKeys loses the first completion of a key and the release that
// follows it, as a handler killed between claiming the key and completing
// it would: the record stays started until its lease ends.
type dyingKeys struct {
	keyStore
	died, buried atomic.Bool
}

func (k *dyingKeys) Replace(ctx context.Context, r idempotency.Record, etag string) (string, error) {
	if r.State == idempotency.Succeeded && k.died.CompareAndSwap(false, true) {
		return "", &orders.StoreError{Op: "replace idempotency key", OrderID: r.ID, Transient: true, Err: errors.New("connection reset")}
	}
	return k.keyStore.Replace(ctx, r, etag)
}

func (k *dyingKeys) Release(ctx context.Context, id, etag string) error {
	if k.died.Load() && k.buried.CompareAndSwap(false, true) {
		return &orders.StoreError{Op: "release idempotency key", OrderID: id, Transient: true, Err: errors.New("connection reset")}
	}
	return k.keyStore.Release(ctx, id, etag)
}

func TestSubmitOrderTakesOverTheKeyOfADeadRequest(t *testing.T) {
	const lease = 30 * time.Second
	clock := idemtest.NewClock(time.Now().UTC())
	d := startFrontDoor(t, func(c *Config) {
		c.Idempotency = &idempotency.Service{Store: &dyingKeys{keyStore: c.Submissions.(keyStore)}, Lease: lease, Now: clock.Now}
	})
	id, body := uniqueOrder(t)
	key := "dies-" + id

	died := d.submit(t, key, body)
	wantProblem(t, died, http.StatusServiceUnavailable, "service-unavailable")
	// The dead request sent nothing: its record does not make the order submitted.
	wantProblem(t, d.get(t, id, nil), http.StatusNotFound, "order-not-found")
	// The key stays claimed by the dead request until its lease ends.
	inFlight := d.submit(t, key, body)
	wantProblem(t, inFlight, http.StatusConflict, "request-in-progress")
	// Retry-After is when a live first request would have answered
	// (DefaultSubmitDeadline and the settling of its key), below the lease.
	if s, _ := strconv.Atoi(inFlight.Header.Get("Retry-After")); s != int((DefaultSubmitDeadline+idempotency.SettleTimeout)/time.Second) {
		t.Errorf("Retry-After %q, want %s", inFlight.Header.Get("Retry-After"), DefaultSubmitDeadline+idempotency.SettleTimeout)
	}

	clock.Advance(lease + time.Second)
	a := d.submit(t, key, body)
	if a.StatusCode != http.StatusAccepted || a.Header.Get(headerReplayed) != "" {
		t.Fatalf("after the lease: %d %s, want a first 202", a.StatusCode, a.Body)
	}
	if log := d.logsOf(a.answer); !strings.Contains(log, `"tookOver":true`) {
		t.Errorf("the take-over is not logged: %s", log)
	}
	if p := d.deliver(t, a); !strings.Contains(p.Logs[0], "created "+id) {
		t.Errorf("ProcessOrder: %q", p.Logs[0])
	}
	if again := d.submit(t, key, body); again.Header.Get(headerReplayed) != "true" || string(again.Body) != string(a.Body) {
		t.Errorf("retry after the take-over: %d %s", again.StatusCode, again.Body)
	}
}

// A request in flight answers within SUBMIT_DEADLINE (and the few seconds
// it may take to settle its key), far sooner than its lease ends: the 409
// asks the retry to come back when a live first request will have answered,
// not to wait out a lease kept for requests that died.
func TestSubmitOrderInFlightRetryAfterIsTheFirstRequestsDeadline(t *testing.T) {
	const deadline = 3 * time.Second
	var gate *gatedKeys
	d := startFrontDoor(t, func(c *Config) {
		gate = &gatedKeys{keyStore: c.Submissions.(keyStore), entered: make(chan struct{}, 1), open: make(chan struct{})}
		c.Idempotency = &idempotency.Service{Store: gate, Lease: time.Minute}
		c.SubmitDeadline = deadline
	})
	id, body := uniqueOrder(t)
	key := "retry-after-" + id
	firstDone := make(chan error, 1)
	go func() {
		_, err := d.testServer.call(FunctionSubmitOrder, hostHTTPInvocation(FunctionSubmitOrder, submitCall(key, body)))
		firstDone <- err
	}()
	<-gate.entered
	a := d.submit(t, key, body)
	close(gate.open)
	wantProblem(t, a, http.StatusConflict, "request-in-progress")
	most := int((deadline + idempotency.SettleTimeout) / time.Second)
	if s, err := strconv.Atoi(a.Header.Get("Retry-After")); err != nil || s < 1 || s > most {
		t.Errorf("Retry-After %q, want 1 to %d seconds (SUBMIT_DEADLINE and the settling of the key), not the 60 s lease", a.Header.Get("Retry-After"), most)
	}
	if err := <-firstDone; err != nil {
		t.Fatal(err)
	}
}
