package idempotency_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ordersink/orders-consumer/idempotency"
	"github.com/ordersink/orders-consumer/idempotency/idemtest"
	"github.com/ordersink/orders-consumer/orders"
)

var (
	scope = idempotency.Scope{Client: "anonymous", Operation: "SubmitOrder", Key: "k-1"}
	fp    = strings.Repeat("ab", 32)
	ok    = idempotency.Response{Status: 201, Body: []byte(`{"orderId":"ORD-1"}`)}
)

func okWork(context.Context) (idempotency.Response, error) { return ok, nil }

func TestNewServiceChecksLeaseAndTTL(t *testing.T) {
	store := idemtest.NewMemStore()
	for _, tc := range []struct {
		lease, ttl time.Duration
		wantErr    string
	}{
		{time.Minute, 24 * time.Hour, ""},
		{time.Minute, time.Minute, ""},
		{0, time.Hour, "lease must be positive"},
		{-time.Second, time.Hour, "lease must be positive"},
		{time.Minute, 59 * time.Second, "must be at least the lease"},
	} {
		s, err := idempotency.NewService(store, tc.lease, tc.ttl)
		if tc.wantErr == "" && (err != nil || s.Lease != tc.lease || s.TTL != tc.ttl) {
			t.Errorf("NewService(%s, %s): %+v, %v", tc.lease, tc.ttl, s, err)
		}
		if tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
			t.Errorf("NewService(%s, %s): %v, want an error saying %q", tc.lease, tc.ttl, err, tc.wantErr)
		}
	}
	if _, err := idempotency.NewService(nil, time.Minute, time.Hour); err == nil {
		t.Error("NewService without a store succeeded")
	}
}

func TestExecuteRefusesIncompleteRequests(t *testing.T) {
	s := &idempotency.Service{Store: idemtest.NewMemStore()}
	for name, tc := range map[string]struct {
		scope idempotency.Scope
		fp    string
	}{
		"no key":         {idempotency.Scope{Client: "c", Operation: "op"}, fp},
		"no operation":   {idempotency.Scope{Client: "c", Key: "k"}, fp},
		"no fingerprint": {scope, ""},
	} {
		ran := false
		_, err := s.Execute(context.Background(), tc.scope, idempotency.Fingerprint{Hash: tc.fp}, func(context.Context) (idempotency.Response, error) {
			ran = true
			return ok, nil
		})
		if err == nil || ran {
			t.Errorf("%s: %v, work ran %v; want an error and no work", name, err, ran)
		}
	}
}

// TestExecuteDefaults: a zero Service has a 60 s lease and a 24 h TTL, and
// the work runs under a deadline of one lease (exactly: virtual time).
func TestExecuteDefaults(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := idemtest.NewMemStore()
		clock := idemtest.NewClock(time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC))
		s := &idempotency.Service{Store: store, Now: clock.Now}
		_, err := s.Execute(context.Background(), scope, idempotency.Fingerprint{Hash: fp}, func(ctx context.Context) (idempotency.Response, error) {
			deadline, has := ctx.Deadline()
			if left := time.Until(deadline); !has || left != idempotency.DefaultLease {
				t.Errorf("work deadline in %s, want one lease (%s)", left, idempotency.DefaultLease)
			}
			r, err := store.Read(ctx, scope.ID())
			if err != nil || !r.LeaseUntil.Equal(clock.Now().Add(idempotency.DefaultLease)) || r.TTL != 86400 {
				t.Errorf("claimed record %+v, %v; want a lease of 60 s and a TTL of 86400 s", r, err)
			}
			return ok, nil
		})
		if err != nil {
			t.Fatal(err)
		}
	})
}

// failing fails every call of one kind with err.
type failing struct {
	idempotency.Store
	claim, read, replace error
}

func (s failing) Claim(ctx context.Context, r idempotency.Record) (string, error) {
	if s.claim != nil {
		return "", s.claim
	}
	return s.Store.Claim(ctx, r)
}

func (s failing) Read(ctx context.Context, id string) (idempotency.Record, error) {
	if s.read != nil {
		return idempotency.Record{}, s.read
	}
	return s.Store.Read(ctx, id)
}

func (s failing) Replace(ctx context.Context, r idempotency.Record, etag string) (string, error) {
	if s.replace != nil {
		return "", s.replace
	}
	return s.Store.Replace(ctx, r, etag)
}

// TestFailedCompletionFreesTheKey: when the answer could not be stored, the
// key is released, so the client's retry runs the work again at once
// instead of meeting a started record (409) until the lease ends.
func TestFailedCompletionFreesTheKey(t *testing.T) {
	throttled := &idempotency.KeyStoreError{Op: "complete idempotency key", Key: scope.ID(), Status: 429, IsTransient: true, Err: errors.New("429 Too Many Requests")}
	mem := idemtest.NewMemStore()
	now := time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)
	runs := 0
	work := func(context.Context) (idempotency.Response, error) { runs++; return ok, nil }
	first := &idempotency.Service{Store: failing{Store: mem, replace: throttled}, Now: func() time.Time { return now }}
	if _, err := first.Execute(context.Background(), scope, idempotency.Fingerprint{Hash: fp}, work); !orders.IsTransient(err) {
		t.Fatalf("first: %v, want the transient completion failure", err)
	}
	if _, err := mem.Read(context.Background(), scope.ID()); !errors.Is(err, idempotency.ErrNotFound) {
		t.Fatalf("the key record after a failed completion: %v, want it released", err)
	}
	retry := &idempotency.Service{Store: mem, Now: func() time.Time { return now.Add(time.Second) }}
	res, err := retry.Execute(context.Background(), scope, idempotency.Fingerprint{Hash: fp}, work)
	if err != nil || res.Verdict != idempotency.Executed || runs != 2 {
		t.Fatalf("retry: %+v, %v after %d runs; want it executed at once", res, err, runs)
	}
}

// TestExecuteStoreFailures: what the store could not do is returned as its
// error, and the work does not run unless the key is claimed.
func TestExecuteStoreFailures(t *testing.T) {
	throttled := &idempotency.KeyStoreError{Op: "claim idempotency key", Key: scope.ID(), Status: 429, IsTransient: true, Err: errors.New("429 Too Many Requests")}
	claimed := func() idempotency.Store {
		m := idemtest.NewMemStore()
		if _, err := m.Claim(context.Background(), idempotency.Record{ID: scope.ID(), RequestHash: fp, State: idempotency.Started}); err != nil {
			t.Fatal(err)
		}
		return m
	}
	for name, tc := range map[string]struct {
		store     idempotency.Store
		transient bool
		wantText  string
	}{
		"claim fails":      {failing{Store: idemtest.NewMemStore(), claim: throttled}, true, "429"},
		"read fails":       {failing{Store: claimed(), read: throttled}, true, "429"},
		"take-over fails":  {failing{Store: claimed(), replace: throttled}, true, "429"},
		"record vanishes":  {failing{Store: claimed(), read: idempotency.ErrNotFound}, true, "changed 5 times"},
		"completion fails": {failing{Store: idemtest.NewMemStore(), replace: throttled}, true, "429"},
	} {
		t.Run(name, func(t *testing.T) {
			s := &idempotency.Service{Store: tc.store, Now: func() time.Time { return time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC) }}
			ran := false
			res, err := s.Execute(context.Background(), scope, idempotency.Fingerprint{Hash: fp}, func(context.Context) (idempotency.Response, error) {
				ran = true
				return ok, nil
			})
			if err == nil || orders.IsTransient(err) != tc.transient || !strings.Contains(err.Error(), tc.wantText) ||
				!strings.Contains(err.Error(), scope.ID()) || res.Verdict != 0 {
				t.Errorf("%+v, %v; want an error saying %q and naming the key record", res, err, tc.wantText)
			}
			if ran != (name == "completion fails") {
				t.Errorf("the work ran: %v", ran)
			}
		})
	}
}

// TestExecuteRefusesCorruptRecords: a stored record Execute cannot judge is
// a final error, never a replay of nothing or a take-over.
func TestExecuteRefusesCorruptRecords(t *testing.T) {
	for name, rec := range map[string]idempotency.Record{
		"succeeded without response": {State: idempotency.Succeeded},
		"unknown state":              {State: "finished", Response: &ok},
	} {
		store := idemtest.NewMemStore()
		rec.ID, rec.RequestHash = scope.ID(), fp
		if _, err := store.Claim(context.Background(), rec); err != nil {
			t.Fatal(err)
		}
		s := &idempotency.Service{Store: store}
		res, err := s.Execute(context.Background(), scope, idempotency.Fingerprint{Hash: fp}, okWork)
		if err == nil || orders.IsTransient(err) || res.Verdict != 0 {
			t.Errorf("%s: %+v, %v; want a final error", name, res, err)
		}
	}
}

func TestOutcomeNames(t *testing.T) {
	for o, want := range map[idempotency.Verdict]string{idempotency.Executed: "executed", idempotency.Replayed: "replayed",
		idempotency.Mismatched: "mismatch", idempotency.InFlight: "inFlight", 0: "unknown"} {
		if o.String() != want {
			t.Errorf("Verdict(%d) is %q, want %q", int(o), o, want)
		}
	}
}

// TestFinishesAfterTheRequestEnded: the key is completed or released even
// when the request's context ended while the work ran, so a retry is
// replayed or runs at once instead of waiting for the lease.
func TestFinishesAfterTheRequestEnded(t *testing.T) {
	store := idemtest.NewMemStore()
	s := &idempotency.Service{Store: store}
	ctx, cancel := context.WithCancel(context.Background())
	res, err := s.Execute(ctx, scope, idempotency.Fingerprint{Hash: fp}, func(context.Context) (idempotency.Response, error) {
		cancel() // the caller hung up, after the effect
		return ok, nil
	})
	if err != nil || res.Verdict != idempotency.Executed {
		t.Fatalf("%+v, %v; want Executed", res, err)
	}
	if r, err := store.Read(context.Background(), scope.ID()); err != nil || r.State != idempotency.Succeeded {
		t.Errorf("record %+v, %v; want it completed", r, err)
	}

	other := idempotency.Scope{Client: scope.Client, Operation: scope.Operation, Key: "k-2"}
	ctx, cancel = context.WithCancel(context.Background())
	_, err = s.Execute(ctx, other, idempotency.Fingerprint{Hash: fp}, func(ctx context.Context) (idempotency.Response, error) {
		cancel() // the caller hung up, before the effect
		return idempotency.Response{}, ctx.Err()
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("%v; want the work's error", err)
	}
	if _, err := store.Read(context.Background(), other.ID()); !errors.Is(err, idempotency.ErrNotFound) {
		t.Errorf("the key is not released: %v", err)
	}
}

// timingOutCompletion is a key store whose completion (a Replace to a
// finished state) hangs until its context ends, as a store that stopped
// answering; it records how much time the release after it was given.
type timingOutCompletion struct {
	idempotency.Store
	releaseLeft time.Duration
	releaseErr  error
}

func (s *timingOutCompletion) Replace(ctx context.Context, r idempotency.Record, etag string) (string, error) {
	if r.State == idempotency.Started {
		return s.Store.Replace(ctx, r, etag)
	}
	<-ctx.Done()
	return "", &idempotency.KeyStoreError{Op: "replace idempotency key", Key: r.ID, IsTransient: true, Err: ctx.Err()}
}

func (s *timingOutCompletion) Release(ctx context.Context, id, etag string) error {
	if d, ok := ctx.Deadline(); ok {
		s.releaseLeft = time.Until(d)
	}
	s.releaseErr = ctx.Err()
	return s.Store.Release(ctx, id, etag)
}

// TestReleaseAfterATimedOutCompletionHasItsOwnDeadline: the completion spent
// its FinishTimeout; the release that frees the key gets a fresh one, so it
// reaches the store and the retry runs at once instead of waiting out the
// lease. On virtual time: the completion is cut at exactly FinishTimeout.
func TestReleaseAfterATimedOutCompletionHasItsOwnDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem := idemtest.NewMemStore()
		store := &timingOutCompletion{Store: mem}
		s := &idempotency.Service{Store: store}
		start := time.Now()
		_, err := s.Execute(context.Background(), scope, idempotency.Fingerprint{Hash: fp}, okWork)
		if !orders.IsTransient(err) {
			t.Fatalf("Execute: %v, want the completion's transient error", err)
		}
		if took := time.Since(start); took != idempotency.FinishTimeout {
			t.Errorf("Execute returned after %s, want the completion cut at FinishTimeout (%s)", took, idempotency.FinishTimeout)
		}
		if store.releaseErr != nil || store.releaseLeft != idempotency.FinishTimeout {
			t.Fatalf("release ran with %s left (%v), want a fresh FinishTimeout (%s)", store.releaseLeft, store.releaseErr, idempotency.FinishTimeout)
		}
		if _, err := mem.Read(context.Background(), scope.ID()); !errors.Is(err, idempotency.ErrNotFound) {
			t.Errorf("key record after the release: %v, want none", err)
		}
	})
}
