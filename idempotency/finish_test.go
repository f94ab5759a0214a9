package idempotency_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ordersink/orders-consumer/idempotency"
	"github.com/ordersink/orders-consumer/idempotency/idemtest"
	"github.com/ordersink/orders-consumer/orders"
)

// releasing answers every Release with err.
type releasing struct {
	idempotency.Store
	err error
}

func (s releasing) Release(context.Context, string, string) error { return s.err }

// TestFailedCompletionThenRelease: when the completion cannot be stored,
// the key is released; the error says when that release failed too (the
// key then stays started until its lease ends), and says nothing more when
// the release was fenced (another attempt's record stands).
func TestFailedCompletionThenRelease(t *testing.T) {
	throttled := &idempotency.KeyStoreError{Op: "complete idempotency key", Key: scope.ID(), Status: 429, IsTransient: true, Err: errors.New("429 Too Many Requests")}
	for _, tc := range []struct {
		name        string
		releaseErr  error
		wantRelease bool // the error mentions the failed release
	}{
		{"the release fails too", errors.New("503 Service Unavailable"), true},
		{"the release is fenced", fmt.Errorf("release: %w", idempotency.ErrFenced), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem := idemtest.NewMemStore()
			s := &idempotency.Service{Store: releasing{Store: failing{Store: mem, replace: throttled}, err: tc.releaseErr}}
			_, err := s.Execute(context.Background(), scope, idempotency.Fingerprint{Hash: fp}, okWork)
			if !errors.Is(err, throttled) {
				t.Fatalf("execute: %v, want the completion's error", err)
			}
			if mentions := strings.Contains(err.Error(), "releasing the key failed"); mentions != tc.wantRelease {
				t.Errorf("execute: %q; mentions a failed release: %v, want %v", err, mentions, tc.wantRelease)
			}
		})
	}
}

// vanishing is a store whose record is never there when read, though the
// claim finds one: a record released, or a read served by a lagging replica,
// every time.
type vanishing struct {
	idempotency.Store
	claims int
}

func (s *vanishing) Claim(context.Context, idempotency.Record) (string, error) {
	s.claims++
	return "", idempotency.ErrExists
}

func (s *vanishing) Read(context.Context, string) (idempotency.Record, error) {
	return idempotency.Record{}, idempotency.ErrNotFound
}

// TestVanishingRecordIsClaimedAgainThenAfterPauses: a record that vanishes
// between the claim and the read is claimed again at once, once; every
// later attempt first pauses (for a replica to catch up), and a request
// whose context has ended stops there, with a transient error, rather than
// hammering the store; a live one gives up after a bounded number of
// judgements. On virtual time: the pauses are exactly 20, 80 and 320 ms.
func TestVanishingRecordIsClaimedAgainThenAfterPauses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ended, cancel := context.WithCancel(context.Background())
		cancel()
		store := &vanishing{}
		_, err := (&idempotency.Service{Store: store}).Execute(ended, scope, idempotency.Fingerprint{Hash: fp}, okWork)
		if !orders.IsTransient(err) || !errors.Is(err, context.Canceled) || store.claims != 2 {
			t.Errorf("ended context: %v after %d claims; want a transient error for the ended context after 2", err, store.claims)
		}
		store = &vanishing{}
		start := time.Now()
		_, err = (&idempotency.Service{Store: store}).Execute(context.Background(), scope, idempotency.Fingerprint{Hash: fp}, okWork)
		if !orders.IsTransient(err) || store.claims != 5 {
			t.Errorf("live context: %v after %d claims; want a transient error after 5", err, store.claims)
		}
		if took := time.Since(start); took != 420*time.Millisecond {
			t.Errorf("live context: gave up after %s; want pauses of 20, 80 and 320 ms before the last three claims", took)
		}
	})
}
