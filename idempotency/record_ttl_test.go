package idempotency_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/ordersink/orders-consumer/idempotency"
	"github.com/ordersink/orders-consumer/idempotency/idemtest"
)

// TestRecordsCarryTheServicesTTL: every record the service writes (the
// claim, the completion, a take-over) lives for the Service's TTL
// (IDEMPOTENCY_KEY_TTL), not the 24 h default: a shorter TTL frees keys
// for reuse sooner, a longer one answers retries longer. It is whole
// seconds, rounded up, and never below the lease.
func TestRecordsCarryTheServicesTTL(t *testing.T) {
	for _, tc := range []struct {
		name       string
		lease, ttl time.Duration
		want       int64
	}{
		{"two hours", time.Minute, 2 * time.Hour, 7200},
		{"a week", time.Minute, 7 * 24 * time.Hour, 604800},
		{"part of a second rounds up", time.Minute, 90*time.Minute + 500*time.Millisecond, 5401},
		{"below the lease, the lease", 2 * time.Minute, time.Minute, 120},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := idemtest.NewMemStore()
			clock := idemtest.NewClock(time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC))
			s := &idempotency.Service{Store: store, Lease: tc.lease, TTL: tc.ttl, Now: clock.Now}
			wantTTL := func(ctx context.Context, when string) {
				t.Helper()
				r, err := store.Read(ctx, scope.ID())
				if err != nil || r.TTL != tc.want {
					t.Errorf("%s: record TTL %d s (%v), want %d s", when, r.TTL, err, tc.want)
				}
			}
			died := errors.New("the process died")
			dying := &releaseFails{Store: store, err: died}
			s.Store = dying
			_, err := s.Execute(context.Background(), scope, idempotency.Fingerprint{Hash: fp}, func(ctx context.Context) (idempotency.Response, error) {
				wantTTL(ctx, "claimed")
				return idempotency.Response{}, died
			})
			if !errors.Is(err, died) {
				t.Fatalf("a worker that died: %v", err)
			}
			s.Store = store
			clock.Advance(tc.lease)
			res, err := s.Execute(context.Background(), scope, idempotency.Fingerprint{Hash: fp}, func(ctx context.Context) (idempotency.Response, error) {
				wantTTL(ctx, "taken over")
				return ok, nil
			})
			if err != nil || !res.TookOver {
				t.Fatalf("take-over: %+v, %v", res, err)
			}
			wantTTL(context.Background(), "completed")
		})
	}
}

// releaseFails is a store whose releases fail, as when the process dies
// before it can free the key: the record stays started.
type releaseFails struct {
	idempotency.Store
	err error
}

func (s *releaseFails) Release(context.Context, string, string) error { return s.err }
