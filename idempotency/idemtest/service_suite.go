package idemtest

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ordersink/orders-consumer/idempotency"
	"github.com/ordersink/orders-consumer/orders"
	"github.com/ordersink/orders-consumer/orders/orderstest"
)

// Lease is the lease of the services TestService builds.
const Lease = time.Minute

// TestService runs the scenarios of [idempotency.Service] over the store
// newStore returns: every verdict, concurrent requests with one key, a
// worker that dies, fencing, and how failures are kept or released. Leases
// end by advancing a [Clock], never by sleeping.
func TestService(t *testing.T, newStore func(t *testing.T) Backend) {
	tests := []struct {
		name string
		run  func(t *testing.T, h *harness)
	}{
		{"FirstExecutesThenReplays", testExecuteThenReplay},
		{"OtherPayloadIsMismatch", testMismatch},
		{"RunningKeyIsInFlight", testInFlight},
		{"ConcurrentSameKeyRunsOnce", testConcurrentSameKey},
		{"DeadWorkerAfterEffectIsTakenOver", testDeadAfterEffect},
		{"DeadWorkerBeforeEffectIsTakenOver", testDeadBeforeEffect},
		{"TakeOverStartsAFreshLease", testTakeOverStartsAFreshLease},
		{"StaleCompletionIsFenced", testStaleCompletion},
		{"ClientErrorIsStoredAndReplayed", testClientError},
		{"TransientErrorReleasesKey", testTransientError},
		{"RoundTripsPerPath", testRoundTrips},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, newStore(t))
			tc.run(t, h)
		})
	}
}

// harness is one test's service over a store that counts and can die.
type harness struct {
	store   Backend
	dying   *dying
	count   *Counting
	clock   *Clock
	svc     *idempotency.Service
	scope   idempotency.Scope
	fp      string
	orders  *orderstest.MemStore
	ran     atomic.Int64 // how often work ran
	orderID string
}

func newHarness(t *testing.T, s Backend) *harness {
	h := &harness{store: s, clock: NewClock(time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)), orders: orderstest.NewMemStore()}
	h.dying = &dying{Store: s}
	h.count = &Counting{Store: h.dying}
	h.svc = &idempotency.Service{Store: h.count, Lease: Lease, TTL: 24 * time.Hour, Now: h.clock.Now}
	seq := keySeq.Add(1)
	h.scope = idempotency.Scope{Client: "key:" + strings.ReplaceAll(t.Name(), "/", "-"), Operation: "SubmitOrder",
		Key: fmt.Sprintf("service-%d-%d", time.Now().UnixNano(), seq)}
	h.orderID = fmt.Sprintf("ORD-%d-%d", time.Now().UnixNano(), seq)
	h.fp = strings.Repeat("0f", 32)
	return h
}

// accepted is the response of the work below.
func (h *harness) accepted() idempotency.Response {
	return idempotency.Response{Status: 201, Headers: map[string]string{"Location": "/api/orders/" + h.orderID},
		Body: fmt.Appendf(nil, `{"orderId":%q}`, h.orderID)}
}

// createOrder is a work whose effect tolerates a second attempt: it creates
// the order, and a second run finds it created.
func (h *harness) createOrder(ctx context.Context) (idempotency.Response, error) {
	h.ran.Add(1)
	o, err := orders.ParseOrder(orderstest.ExampleBodyWithID(h.orderID))
	if err != nil {
		return idempotency.Response{}, idempotency.ClientError(idempotency.Response{Status: 422, Body: []byte(err.Error())})
	}
	b, err := o.AcceptanceDocuments(orders.Acceptance{MessageID: o.ID, AcceptedAt: h.clock.Now()})
	if err != nil {
		return idempotency.Response{}, err
	}
	if _, err := h.orders.CreateOrder(ctx, b); err != nil {
		return idempotency.Response{}, err
	}
	return h.accepted(), nil
}

func (h *harness) execute(t *testing.T, fp string, work idempotency.Work) (idempotency.Execution, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return h.svc.Execute(ctx, h.scope, idempotency.Fingerprint{Hash: fp}, work)
}

// want checks an Execute's answer.
func (h *harness) want(t *testing.T, res idempotency.Execution, err error, verdict idempotency.Verdict, resp idempotency.Response) {
	t.Helper()
	if err != nil || res.Verdict != verdict {
		t.Fatalf("execute: %+v, %v; want %s", res, err, verdict)
	}
	if !reflect.DeepEqual(res.Response, resp) {
		t.Errorf("execute: response %+v, want %+v", res.Response, resp)
	}
}

func (h *harness) wantRuns(t *testing.T, n int64) {
	t.Helper()
	if got := h.ran.Load(); got != n {
		t.Errorf("the work ran %d times, want %d", got, n)
	}
}

func (h *harness) wantOrders(t *testing.T, n int) {
	t.Helper()
	if got := h.orders.Orders(); got != n {
		t.Errorf("%d orders created, want %d", got, n)
	}
}

func (h *harness) wantState(t *testing.T, state idempotency.State) idempotency.Record {
	t.Helper()
	r, err := h.store.Read(context.Background(), h.scope.ID())
	if err != nil || r.State != state || r.RequestHash != h.fp {
		t.Fatalf("stored record %+v, %v; want %s for order %s", r, err, state, h.orderID)
	}
	return r
}

// dying is a store whose process died: while dead, no write reaches it.
type dying struct {
	idempotency.Store
	dead atomic.Bool
}

var errDied = errors.New("the process died")

func (s *dying) Replace(ctx context.Context, r idempotency.Record, etag string) (string, error) {
	if s.dead.Load() {
		return "", &idempotency.KeyStoreError{Op: "replace idempotency key", Key: r.ID, IsTransient: true, Err: errDied}
	}
	return s.Store.Replace(ctx, r, etag)
}

func (s *dying) Release(ctx context.Context, id, etag string) error {
	if s.dead.Load() {
		return &idempotency.KeyStoreError{Op: "release idempotency key", Key: id, IsTransient: true, Err: errDied}
	}
	return s.Store.Release(ctx, id, etag)
}

func testExecuteThenReplay(t *testing.T, h *harness) {
	res, err := h.execute(t, h.fp, h.createOrder)
	h.want(t, res, err, idempotency.Executed, h.accepted())
	if res.TookOver {
		t.Error("a first claim reports a take-over")
	}
	h.wantState(t, idempotency.Succeeded)
	for range 2 {
		h.clock.Advance(2 * Lease) // a replay does not depend on leases
		res, err = h.execute(t, h.fp, h.createOrder)
		h.want(t, res, err, idempotency.Replayed, h.accepted())
	}
	h.wantRuns(t, 1)
	h.wantOrders(t, 1)
}

func testMismatch(t *testing.T, h *harness) {
	other := strings.Repeat("aa", 32)
	// A mismatch while the first request runs, then after it finished.
	res, err := h.execute(t, h.fp, func(ctx context.Context) (idempotency.Response, error) {
		res, err := h.execute(t, other, h.createOrder)
		h.want(t, res, err, idempotency.Mismatched, idempotency.Response{})
		return h.createOrder(ctx)
	})
	h.want(t, res, err, idempotency.Executed, h.accepted())
	res, err = h.execute(t, other, h.createOrder)
	h.want(t, res, err, idempotency.Mismatched, idempotency.Response{})
	h.wantRuns(t, 1)
	h.wantState(t, idempotency.Succeeded)
}

func testInFlight(t *testing.T, h *harness) {
	res, err := h.execute(t, h.fp, func(ctx context.Context) (idempotency.Response, error) {
		h.clock.Advance(10*time.Second + 400*time.Millisecond)
		inner, err := h.execute(t, h.fp, h.createOrder)
		h.want(t, inner, err, idempotency.InFlight, idempotency.Response{})
		if inner.RetryAfter != 50*time.Second {
			t.Errorf("RetryAfter %s with 49.6 s of the lease left, want 50s (whole seconds, rounded up)", inner.RetryAfter)
		}
		h.clock.Advance(49*time.Second + 300*time.Millisecond)
		inner, _ = h.execute(t, h.fp, h.createOrder)
		if inner.Verdict != idempotency.InFlight || inner.RetryAfter != time.Second {
			t.Errorf("%+v with 0.3 s of the lease left, want InFlight after 1s", inner)
		}
		h.wantState(t, idempotency.Started)
		return h.createOrder(ctx)
	})
	h.want(t, res, err, idempotency.Executed, h.accepted())
	h.wantRuns(t, 1)
}

// testConcurrentSameKey: 32 requests with one key at once. The work holds
// until every other request has answered, so they all meet it running (a
// store that let several claim releases them once all are in the work).
func testConcurrentSameKey(t *testing.T, h *harness) {
	const n = 32
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var (
		counted     sync.Mutex
		inWork, out int
		release     = make(chan struct{})
	)
	// count counts a request that entered the work or answered without it.
	count := func(entered bool) {
		counted.Lock()
		defer counted.Unlock()
		if entered {
			inWork++
		} else {
			out++
		}
		if inWork+out == n {
			close(release)
		}
	}
	work := func(ctx context.Context) (idempotency.Response, error) {
		count(true)
		select {
		case <-release:
		case <-ctx.Done():
			return idempotency.Response{}, ctx.Err()
		}
		return h.createOrder(ctx)
	}
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		verdicts = map[idempotency.Verdict]int{}
		errs     []error
	)
	for range n {
		wg.Go(func() {
			res, err := h.svc.Execute(ctx, h.scope, idempotency.Fingerprint{Hash: h.fp}, work)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err != nil:
				errs = append(errs, err)
			case res.Verdict == idempotency.InFlight && res.RetryAfter != Lease:
				t.Errorf("InFlight with RetryAfter %s, want the whole lease %s", res.RetryAfter, Lease)
			case res.Verdict != idempotency.InFlight && !reflect.DeepEqual(res.Response, h.accepted()):
				t.Errorf("%s with %+v, want the work's response", res.Verdict, res.Response)
			}
			verdicts[res.Verdict]++
			if res.Verdict != idempotency.Executed {
				count(false)
			}
		})
	}
	wg.Wait()
	if len(errs) > 0 || verdicts[idempotency.Executed] != 1 || verdicts[idempotency.InFlight]+verdicts[idempotency.Replayed] != n-1 {
		t.Errorf("%d concurrent requests with one key: %v, errors %v; want 1 executed, the others in flight or replayed", n, verdicts, errs)
	}
	h.wantRuns(t, 1)
	h.wantOrders(t, 1)
	res, err := h.execute(t, h.fp, h.createOrder)
	h.want(t, res, err, idempotency.Replayed, h.accepted())
}

// testDeadAfterEffect: the worker created the order, then died before its
// completion reached the store. The key stays started; after its lease the
// next request takes it over and runs the work again, which finds the order
// created: the order exists once.
func testDeadAfterEffect(t *testing.T, h *harness) {
	_, err := h.execute(t, h.fp, func(ctx context.Context) (idempotency.Response, error) {
		resp, err := h.createOrder(ctx)
		h.dying.dead.Store(true)
		return resp, err
	})
	if !errors.Is(err, errDied) || errors.Is(err, idempotency.ErrFenced) || !orders.IsTransient(err) {
		t.Fatalf("execute of a dying worker: %v; want the transient store error", err)
	}
	h.dying.dead.Store(false) // the retry reaches another, living instance
	h.wantTakeOver(t)
}

// testDeadBeforeEffect: the worker died before the effect and before it
// could release the key.
func testDeadBeforeEffect(t *testing.T, h *harness) {
	_, err := h.execute(t, h.fp, func(context.Context) (idempotency.Response, error) {
		h.dying.dead.Store(true)
		return idempotency.Response{}, errDied
	})
	if !errors.Is(err, errDied) || !strings.Contains(err.Error(), "release failed") {
		t.Fatalf("execute of a dying worker: %v; want its error and the failed release", err)
	}
	h.dying.dead.Store(false)
	h.wantTakeOver(t)
}

func (h *harness) wantTakeOver(t *testing.T) {
	t.Helper()
	h.wantState(t, idempotency.Started)
	ran := h.ran.Load()
	h.clock.Advance(Lease - time.Second)
	res, err := h.execute(t, h.fp, h.createOrder)
	h.want(t, res, err, idempotency.InFlight, idempotency.Response{})
	h.clock.Advance(time.Second)
	res, err = h.execute(t, h.fp, h.createOrder)
	h.want(t, res, err, idempotency.Executed, h.accepted())
	if !res.TookOver {
		t.Error("the take-over is not reported")
	}
	h.wantRuns(t, ran+1)
	h.wantOrders(t, 1)
	h.wantState(t, idempotency.Succeeded)
	res, err = h.execute(t, h.fp, h.createOrder)
	h.want(t, res, err, idempotency.Replayed, h.accepted())
}

// testStaleCompletion: attempt A hangs past its lease, B takes the key over
// and completes; A's completion is refused and B's answer stays.
func testStaleCompletion(t *testing.T, h *harness) {
	started, release := make(chan struct{}), make(chan struct{})
	// Released at the test's end whatever fails first, so attempt A never
	// outlives it.
	var once sync.Once
	releaseA := func() { once.Do(func() { close(release) }) }
	t.Cleanup(releaseA)
	stale := idempotency.Response{Status: 201, Headers: map[string]string{"X-Attempt": "A"}, Body: []byte("A")}
	errA := make(chan error, 1)
	go func() {
		_, err := h.execute(t, h.fp, func(ctx context.Context) (idempotency.Response, error) {
			close(started)
			select {
			case <-release:
			case <-ctx.Done():
			}
			return stale, nil
		})
		errA <- err
	}()
	select {
	case <-started:
	case err := <-errA:
		t.Fatalf("attempt A ended before its work ran: %v", err)
	}
	h.clock.Advance(Lease)
	res, err := h.execute(t, h.fp, h.createOrder)
	h.want(t, res, err, idempotency.Executed, h.accepted())
	if !res.TookOver {
		t.Error("the take-over is not reported")
	}
	releaseA()
	if err := <-errA; !errors.Is(err, idempotency.ErrFenced) || !strings.Contains(err.Error(), h.scope.ID()) {
		t.Errorf("stale completion: %v; want ErrFenced naming the key record", err)
	}
	if r := h.wantState(t, idempotency.Succeeded); !reflect.DeepEqual(*r.Response, h.accepted()) {
		t.Errorf("stored response %+v after the stale completion, want the newer attempt's", r.Response)
	}
	res, err = h.execute(t, h.fp, h.createOrder)
	h.want(t, res, err, idempotency.Replayed, h.accepted())
}

func testClientError(t *testing.T, h *harness) {
	refused := idempotency.Response{Status: 422, Headers: map[string]string{"Content-Type": "application/problem+json"},
		Body: []byte(`{"title":"Order refused","status":422}`)}
	work := func(context.Context) (idempotency.Response, error) {
		h.ran.Add(1)
		return idempotency.Response{}, fmt.Errorf("checking the order: %w", idempotency.ClientError(refused))
	}
	res, err := h.execute(t, h.fp, work)
	h.want(t, res, err, idempotency.Executed, refused)
	h.wantState(t, idempotency.Failed)
	res, err = h.execute(t, h.fp, work)
	h.want(t, res, err, idempotency.Replayed, refused)
	h.wantRuns(t, 1)
}

func testTransientError(t *testing.T, h *harness) {
	outage := &orders.StoreError{Op: "create order", OrderID: h.orderID, Status: 503, IsTransient: true, Err: errors.New("503 Service Unavailable")}
	_, err := h.execute(t, h.fp, func(context.Context) (idempotency.Response, error) {
		h.ran.Add(1)
		return idempotency.Response{}, outage
	})
	var se *orders.StoreError
	if !errors.As(err, &se) || se != outage || !orders.IsTransient(err) || !strings.Contains(err.Error(), h.scope.ID()) {
		t.Fatalf("execute of a failing work: %v; want the work's error, naming the key record", err)
	}
	wantGone(t, h.store, h.scope.ID())
	res, err := h.execute(t, h.fp, h.createOrder) // the retry, at once: no lease to wait for
	h.want(t, res, err, idempotency.Executed, h.accepted())
	h.wantRuns(t, 2)
	h.wantOrders(t, 1)
}

// RoundTrips are the store calls of each path of Execute, one Cosmos DB
// request each.
var RoundTrips = map[string]Calls{
	"first":        {Claims: 1, Replaces: 1},
	"replay":       {Claims: 1, Reads: 1},
	"mismatch":     {Claims: 1, Reads: 1},
	"inFlight":     {Claims: 1, Reads: 1},
	"take-over":    {Claims: 1, Reads: 1, Replaces: 2},
	"client error": {Claims: 1, Replaces: 1},
	"transient":    {Claims: 1, Releases: 1},
}

func testRoundTrips(t *testing.T, h *harness) {
	got := map[string]Calls{}
	measure := func(path string, f func()) {
		h.count.Calls()
		f()
		got[path] = h.count.Calls()
	}
	run := func(key, fp string, work idempotency.Work) func() {
		return func() {
			scope := h.scope
			scope.Key += "-" + key
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			_, _ = h.svc.Execute(ctx, scope, idempotency.Fingerprint{Hash: fp}, work)
		}
	}
	fail := func(context.Context) (idempotency.Response, error) {
		return idempotency.Response{}, errors.New("outage")
	}
	refuse := func(context.Context) (idempotency.Response, error) {
		return idempotency.Response{}, idempotency.ClientError(idempotency.Response{Status: 422})
	}
	measure("first", run("first", h.fp, h.createOrder))
	measure("replay", run("first", h.fp, h.createOrder))
	measure("mismatch", run("first", strings.Repeat("aa", 32), h.createOrder))
	measure("client error", run("refused", h.fp, refuse))
	measure("transient", run("failing", h.fp, fail))
	run("dying", h.fp, func(ctx context.Context) (idempotency.Response, error) {
		measure("inFlight", run("dying", h.fp, h.createOrder))
		h.dying.dead.Store(true)
		return h.createOrder(ctx)
	})()
	h.dying.dead.Store(false)
	h.clock.Advance(Lease)
	measure("take-over", run("dying", h.fp, h.createOrder))
	for path, want := range RoundTrips {
		if got[path] != want {
			t.Errorf("%s: %s store calls, want %s", path, got[path], want)
		}
	}
}
