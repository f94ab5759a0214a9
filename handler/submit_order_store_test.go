package handler

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ordersink/orders-consumer/idempotency"
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
	// The order is on its way: its submitter can see so.
	if s := decodeState(t, d.get(t, id, nil)); s.State != "submitted" {
		t.Errorf("GET while in flight: %+v", s)
	}

	close(gate.open)
	first := <-firstDone
	if first.StatusCode != http.StatusAccepted {
		t.Fatalf("first: %d %s", first.StatusCode, first.Body)
	}
	if again := d.submit(t, key, body); again.StatusCode != http.StatusAccepted || again.Header.Get(headerReplayed) != "true" || string(again.Body) != string(first.Body) {
		t.Errorf("after the first finished: %d %s", again.StatusCode, again.Body)
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
