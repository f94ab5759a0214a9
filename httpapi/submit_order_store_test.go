package httpapi

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ordersink/orders-consumer/handler"
	"github.com/ordersink/orders-consumer/handler/handlertest"
	"github.com/ordersink/orders-consumer/idempotency"
	"github.com/ordersink/orders-consumer/idempotency/idemtest"
	"github.com/ordersink/orders-consumer/orders"
	"github.com/ordersink/orders-consumer/orders/orderstest"
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

// holdFirst sends partner A's submission in the background and waits until
// its completion is held at gate (its order created, its key not yet
// completed). The gate opens at the test's end whatever happens, so that a
// failing assertion cannot leave the first request, and the test binary,
// waiting for ever.
func (d *api) holdFirst(t *testing.T, gate *gatedKeys, key string, body []byte) (firstDone <-chan callerAnswer, release func()) {
	t.Helper()
	var once sync.Once
	release = func() { once.Do(func() { close(gate.open) }) }
	t.Cleanup(release)
	done := make(chan callerAnswer, 1)
	go func() {
		raw, err := d.Call(FunctionSubmitOrder, hostHTTPInvocation(FunctionSubmitOrder, submitCall(key, body)))
		c, derr := decodeCallerAnswer(raw)
		if err != nil || derr != nil {
			t.Error(err, derr)
		}
		done <- c
	}()
	select {
	case <-gate.entered:
	case a := <-done:
		t.Fatalf("the first request answered %d %.300s before completing its key", a.StatusCode, a.Body)
	case <-time.After(30 * time.Second):
		t.Fatal("the first request never reached the completion of its key")
	}
	return done, release
}

func TestSubmitOrderWhileTheFirstIsInFlight(t *testing.T) {
	var gate *gatedKeys
	d := startAPI(t, func(c *config) {
		gate = &gatedKeys{keyStore: c.Idempotency.Store.(keyStore), entered: make(chan struct{}, 1), open: make(chan struct{})}
		c.Idempotency = &idempotency.Service{Store: gate, Lease: 30 * time.Second}
	})
	id, body := handlertest.UniqueOrder(t)
	key := "in-flight-" + id
	firstDone, release := d.holdFirst(t, gate, key, body)

	a := d.submit(t, key, body)
	wantProblem(t, a, http.StatusConflict, "request-in-progress")
	if s, err := strconv.Atoi(a.Header.Get("Retry-After")); err != nil || s < 1 || s > 30 {
		t.Errorf("Retry-After %q, want 1 to 30 seconds (the lease)", a.Header.Get("Retry-After"))
	}
	// Another payload is refused even while the first runs.
	_, other := handlertest.UniqueOrder(t)
	wantProblem(t, d.submit(t, key, other), http.StatusUnprocessableEntity, "idempotency-key-reused")
	// The order is stored before the first answer: its owner may read it.
	d.wantOrder(t, d.get(t, getCall(id)), http.StatusOK, id)

	release()
	first := <-firstDone
	d.wantOrder(t, first, http.StatusCreated, id)
	if again := d.submit(t, key, body); again.StatusCode != http.StatusCreated || again.Header.Get(headerReplayed) != "true" || string(again.Body) != string(first.Body) {
		t.Errorf("after the first finished: %d %s", again.StatusCode, again.Body)
	}
	wantWritten(t, id)
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
		return "", &idempotency.KeyStoreError{Op: "claim idempotency key", Key: r.ID, IsTransient: true, Err: ctx.Err()}
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
			return failingKeys{keyStore: k, err: &idempotency.KeyStoreError{Op: "claim idempotency key", Status: 503, IsTransient: true,
				Err: errors.New("503 Service Unavailable: sekrit (activity 5e1f)")}}
		}, 503, "service-unavailable"},
		{"no answer", func(k keyStore) failingKeys {
			return failingKeys{keyStore: k, err: &idempotency.KeyStoreError{Op: "claim idempotency key", IsTransient: true, Err: errors.New("dial tcp: sekrit refused")}}
		}, 503, "service-unavailable"},
		{"refused for good", func(k keyStore) failingKeys {
			return failingKeys{keyStore: k, err: &idempotency.KeyStoreError{Op: "claim idempotency key", Status: 400, Err: errors.New("400 Bad Request: sekrit")}}
		}, 500, "internal-error"},
		{"fenced", func(k keyStore) failingKeys {
			return failingKeys{keyStore: k, err: errors.Join(errors.New("sekrit"), idempotency.ErrFenced)}
		}, 409, "request-in-progress"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := startAPI(t, func(c *config) {
				c.Idempotency = &idempotency.Service{Store: tc.keys(c.Idempotency.Store.(keyStore))}
			})
			id, body := handlertest.UniqueOrder(t)
			a := d.submit(t, "k-"+id, body)
			p := wantProblem(t, a, tc.status, tc.anchor)
			if s, err := strconv.Atoi(a.Header.Get("Retry-After")); err != nil || s < 1 {
				t.Errorf("Retry-After %q", a.Header.Get("Retry-After"))
			}
			if !strings.Contains(p.Detail, "same Idempotency-Key and payload") {
				t.Errorf("detail %q does not tell how to retry", p.Detail)
			}
			if log := d.LogsOf(a.Answer); !strings.Contains(log, "sekrit") {
				t.Errorf("the log lacks the store's error: %s", log)
			}
		})
	}
}

// TestSubmitOrderAnswersBeforeItsDeadline: a key store that never answers
// holds a SubmitOrder request until SUBMIT_DEADLINE, then 503. On virtual
// time, over the in-memory stores: at the deadline exactly.
func TestSubmitOrderAnswersBeforeItsDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const deadline = 300 * time.Millisecond
		keys, store := idemtest.NewMemStore(), orderstest.NewMemStore()
		cfg := config{Config: handler.Config{Processor: &orders.Processor{Store: store}, Orders: store},
			Functions: Functions{SubmitDeadline: deadline, Idempotency: &idempotency.Service{Store: failingKeys{keyStore: keys, hang: true}}}}
		d := &api{keys: keys, store: store, Server: handlertest.StartIn(t, func(log *slog.Logger) http.Handler { return newServer(cfg, log) })}
		start := time.Now()
		a := d.submit(t, "k-ORD-DEADLINE-1", orderstest.ExampleBodyWithID("ORD-DEADLINE-1"))
		wantProblem(t, a, http.StatusServiceUnavailable, "service-unavailable")
		if took := time.Since(start); took != deadline {
			t.Errorf("answered after %s, want at the deadline of %s", took, deadline)
		}
	})
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
		return "", &idempotency.KeyStoreError{Op: "replace idempotency key", Key: r.ID, IsTransient: true, Err: errors.New("connection reset")}
	}
	return k.keyStore.Replace(ctx, r, etag)
}

func (k *dyingKeys) Release(ctx context.Context, id, etag string) error {
	if k.died.Load() && k.buried.CompareAndSwap(false, true) {
		return &idempotency.KeyStoreError{Op: "release idempotency key", Key: id, IsTransient: true, Err: errors.New("connection reset")}
	}
	return k.keyStore.Release(ctx, id, etag)
}

// A handler killed between the batch and the completion of its key leaves
// the order created and the key started. The retry after the lease takes
// the key over; its batch finds the order of this very submission, and it
// records and answers what the first would have: 201 and the order.
func TestSubmitOrderFinishesARequestKilledAfterItsBatch(t *testing.T) {
	const lease = 30 * time.Second
	clock := idemtest.NewClock(time.Now().UTC())
	d := startAPI(t, func(c *config) {
		c.Idempotency = &idempotency.Service{Store: &dyingKeys{keyStore: c.Idempotency.Store.(keyStore)}, Lease: lease, Now: clock.Now}
	})
	id, body := handlertest.UniqueOrder(t)
	key := "dies-" + id

	died := d.submit(t, key, body)
	wantProblem(t, died, http.StatusServiceUnavailable, "service-unavailable")
	wantWritten(t, id)
	// The key stays claimed by the dead request until its lease ends.
	inFlight := d.submit(t, key, body)
	wantProblem(t, inFlight, http.StatusConflict, "request-in-progress")
	// Retry-After is when a live first request would have answered
	// (DefaultSubmitDeadline and the finishing of its key), below the lease.
	if s, _ := strconv.Atoi(inFlight.Header.Get("Retry-After")); s != int((DefaultSubmitDeadline+idempotency.FinishTimeout)/time.Second) {
		t.Errorf("Retry-After %q, want %s", inFlight.Header.Get("Retry-After"), DefaultSubmitDeadline+idempotency.FinishTimeout)
	}

	clock.Advance(lease + time.Second)
	a := d.submit(t, key, body)
	d.wantOrder(t, a, http.StatusCreated, id)
	if a.Header.Get(headerReplayed) != "" || a.Header.Get("Location") != ordersPath+"/"+id {
		t.Errorf("after the lease: headers %v, want a first 201 with its Location", a.Header)
	}
	if log := d.LogsOf(a.Answer); !strings.Contains(log, `"tookOver":true`) || !strings.Contains(log, `"outcome":"resumed"`) {
		t.Errorf("the take-over is not logged as resumed: %s", log)
	}
	wantWritten(t, id)
	if again := d.submit(t, key, body); again.Header.Get(headerReplayed) != "true" || string(again.Body) != string(a.Body) {
		t.Errorf("retry after the take-over: %d %s", again.StatusCode, again.Body)
	}
}

// A request whose process dies after its batch (its context ends, nothing
// finishes the key) is finished the same way: this one's completion and
// release never land at all.
func TestSubmitOrderFinishesARequestWhoseProcessDied(t *testing.T) {
	const lease = 30 * time.Second
	clock := idemtest.NewClock(time.Now().UTC())
	keys := testKeyStore(t)
	dead := &deadProcess{keyStore: keys}
	first := startAPI(t, func(c *config) {
		c.Idempotency = &idempotency.Service{Store: dead, Lease: lease, Now: clock.Now}
	})
	id, body := handlertest.UniqueOrder(t)
	key := "killed-" + id
	if a := first.submit(t, key, body); a.StatusCode/100 == 2 {
		t.Fatalf("a request whose key never completed answered %d", a.StatusCode)
	}
	wantWritten(t, id)

	// Another instance of the handler, after the lease.
	clock.Advance(lease + time.Second)
	next := startAPI(t, func(c *config) {
		c.Idempotency = &idempotency.Service{Store: keys, Lease: lease, Now: clock.Now}
	})
	next.wantOrder(t, next.submit(t, key, body), http.StatusCreated, id)
	wantWritten(t, id)
}

// deadProcess is the key store of a process killed after its batch: every
// write that would finish a key fails, as its writes never leave.
type deadProcess struct{ keyStore }

func (k *deadProcess) Replace(ctx context.Context, r idempotency.Record, etag string) (string, error) {
	if r.State != idempotency.Started {
		return "", &idempotency.KeyStoreError{Op: "replace idempotency key", Key: r.ID, IsTransient: true, Err: context.Canceled}
	}
	return k.keyStore.Replace(ctx, r, etag)
}

func (k *deadProcess) Release(_ context.Context, id, _ string) error {
	return &idempotency.KeyStoreError{Op: "release idempotency key", Key: id, IsTransient: true, Err: context.Canceled}
}

// A request in flight answers within SUBMIT_DEADLINE (and the few seconds
// it may take to finish its key), far sooner than its lease ends: the 409
// asks the retry to come back when a live first request will have answered,
// not to wait out a lease kept for requests that died.
func TestSubmitOrderInFlightRetryAfterIsTheFirstRequestsDeadline(t *testing.T) {
	const deadline = 3 * time.Second
	var gate *gatedKeys
	d := startAPI(t, func(c *config) {
		gate = &gatedKeys{keyStore: c.Idempotency.Store.(keyStore), entered: make(chan struct{}, 1), open: make(chan struct{})}
		c.Idempotency = &idempotency.Service{Store: gate, Lease: time.Minute}
		c.SubmitDeadline = deadline
	})
	id, body := handlertest.UniqueOrder(t)
	key := "retry-after-" + id
	firstDone, release := d.holdFirst(t, gate, key, body)
	a := d.submit(t, key, body)
	release()
	<-firstDone
	wantProblem(t, a, http.StatusConflict, "request-in-progress")
	most := int((deadline + idempotency.FinishTimeout) / time.Second)
	if s, err := strconv.Atoi(a.Header.Get("Retry-After")); err != nil || s < 1 || s > most {
		t.Errorf("Retry-After %q, want 1 to %d seconds (SUBMIT_DEADLINE and the finishing of the key), not the 60 s lease", a.Header.Get("Retry-After"), most)
	}
}

// failingOrders is an orders store whose first batch fails as a throttled
// or unreachable Cosmos DB does.
type failingOrders struct {
	handlertest.Store
	failed atomic.Bool
}

func (f *failingOrders) CreateOrder(ctx context.Context, b *orders.AcceptanceBatch) (*orders.StoredFingerprint, error) {
	if f.failed.CompareAndSwap(false, true) {
		return nil, &orders.StoreError{Op: "create order", OrderID: b.OrderID, Status: 503, IsTransient: true, Err: errors.New("503 sekrit")}
	}
	return f.Store.CreateOrder(ctx, b)
}

// A batch that fails transiently releases the key: the 503's retry runs at
// once instead of waiting out the lease, and creates the order.
func TestSubmitOrderBatchFailureReleasesTheKey(t *testing.T) {
	d := startAPI(t, func(c *config) {
		c.Processor = &orders.Processor{Store: &failingOrders{Store: c.Processor.Store.(handlertest.Store)}}
	})
	id, body := handlertest.UniqueOrder(t)
	a := d.submit(t, "k-"+id, body)
	wantProblem(t, a, http.StatusServiceUnavailable, "service-unavailable")
	if a.Header.Get("Retry-After") == "" {
		t.Error("a 503 without Retry-After")
	}
	d.wantNoKey(t, "k-"+id)
	if docs := partition(t, id); len(docs) != 0 {
		t.Fatalf("a failed batch left %d documents", len(docs))
	}
	d.wantOrder(t, d.submit(t, "k-"+id, body), http.StatusCreated, id)
	wantWritten(t, id)
}
