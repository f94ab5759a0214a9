package idempotency

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"
)

// Defaults of a [Service] whose fields are zero.
const (
	DefaultLease = 60 * time.Second
	DefaultTTL   = 24 * time.Hour
)

// maxJudgements bounds how often Execute judges a key whose record changes
// under it (released, taken over by another request) before it gives up
// with a transient error: each change means another request made progress.
const maxJudgements = 5

// FinishTimeout bounds each write that finishes a key's attempt after its work
// ended (the completion, and the release after a completion that failed). It
// runs even when the request's context has ended, often the very reason the
// work stopped: a key left started makes every retry wait for the lease,
// where a completed or released one is replayed or run again at once.
// Execute may thus return up to twice FinishTimeout after its context's
// deadline.
const FinishTimeout = 5 * time.Second

// Service runs work at most once per key and payload (executeOnce); see the
// package documentation for the protocol.
// Pattern: executeOnce with lease and fencing (docs/design-patterns.md#executeonce-with-lease-and-fencing).
type Service struct {
	Store Store
	// Lease is how long an attempt owns a Started key; a Started record
	// older than its lease is taken over. It also bounds the work. Default
	// DefaultLease.
	Lease time.Duration
	// TTL is how long a record lives after its last write; at least Lease.
	// Default DefaultTTL.
	TTL time.Duration
	// Now is the clock of leases and timestamps; time.Now when nil.
	Now func() time.Time
}

// NewService returns a Service over store, checking that lease > 0 and
// ttl >= lease (a record expiring while its attempt runs would let another
// request claim the key anew).
func NewService(store Store, lease, ttl time.Duration) (*Service, error) {
	switch {
	case store == nil:
		return nil, errors.New("idempotency: no store")
	case lease <= 0:
		return nil, fmt.Errorf("idempotency: lease must be positive, got %s", lease)
	case ttl < lease:
		return nil, fmt.Errorf("idempotency: TTL (%s) must be at least the lease (%s)", ttl, lease)
	}
	return &Service{Store: store, Lease: lease, TTL: ttl}, nil
}

// Execute runs work unless the key of scope has been used already: then it
// answers with the stored response (Replayed), refuses another payload
// (Mismatched) or tells the caller to come back (InFlight). fp identifies
// the request's payload; a record is compared with it under the version the
// record was stored with.
//
// Errors are values with context: a store's [KeyStoreError] says whether
// a retry may help ([KeyStoreError.Transient]); an error wrapping [ErrFenced]
// means the work ran but another attempt owns the key now, so its answer
// was not stored (a retry gets the owner's answer); the work's own errors
// are returned wrapped, after the key was released.
func (s *Service) Execute(ctx context.Context, scope Scope, fp Fingerprint, work Work) (Execution, error) {
	if err := scope.check(); err != nil {
		return Execution{}, err
	}
	if fp.Hash == "" {
		return Execution{}, errors.New("idempotency: empty fingerprint")
	}
	id := scope.ID()
	for judgement := range maxJudgements {
		if err := vanishedPause(ctx, judgement); err != nil {
			return Execution{}, &KeyStoreError{Op: "claim idempotency key", Key: id, IsTransient: true, Err: err}
		}
		now := s.now()
		rec := Record{ID: id, Client: scope.Client, Operation: scope.Operation, Key: scope.Key,
			RequestHash: fp.Hash, HashVersion: max(fp.Version, 1), State: Started, Owner: newOwner(),
			LeaseUntil: now.Add(s.lease()), CreatedAt: now, UpdatedAt: now, TTL: s.ttlSeconds()}
		etag, err := s.Store.Claim(ctx, rec)
		if err == nil {
			return s.run(ctx, rec, etag, work, false)
		}
		if !errors.Is(err, ErrExists) {
			return Execution{}, err
		}
		stored, err := s.Store.Read(ctx, id)
		if errors.Is(err, ErrNotFound) {
			// Released (or expired) since the claim failed: claim again. Or
			// a read served by a replica that has not seen the record yet
			// (another instance wrote it; reads without its session token are
			// not read-your-writes): then claiming again after a pause helps.
			continue
		}
		if err != nil {
			return Execution{}, err
		}
		res, takeOver, err := judge(stored, fp, now)
		if !takeOver {
			return res, err
		}
		rec.CreatedAt = stored.CreatedAt
		etag, err = s.Store.Replace(ctx, rec, stored.ETag)
		if errors.Is(err, ErrFenced) {
			continue // another request took it over or completed it first
		}
		if err != nil {
			return Execution{}, err
		}
		return s.run(ctx, rec, etag, work, true)
	}
	return Execution{}, &KeyStoreError{Op: "claim idempotency key", Key: id, IsTransient: true,
		Err: fmt.Errorf("the record changed %d times while it was judged", maxJudgements)}
}

// vanishedPause waits before the n-th judgement of a key: none before the
// first two (a key released meanwhile is claimed at once), then 20, 80 and
// 320 ms: a record another instance claimed a moment ago may be missing
// from the replica that serves this instance's read (Session consistency
// without that instance's token) for as long as Cosmos DB's reads behind a
// write do (docs/adr/0016-reads-behind-a-write.md).
func vanishedPause(ctx context.Context, n int) error {
	if n < 2 {
		return nil
	}
	t := time.NewTimer(20 * time.Millisecond << (2 * (n - 2)))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// judge decides what a request makes of the stored record of its key, or
// that the record is a Started one whose lease has ended (takeOver).
func judge(stored Record, fp Fingerprint, now time.Time) (res Execution, takeOver bool, err error) {
	if !fp.matches(stored.RequestHash, stored.HashVersion) {
		return Execution{Verdict: Mismatched}, false, nil
	}
	switch stored.State {
	case Succeeded, Failed:
		if stored.Response == nil {
			return Execution{}, false, &KeyStoreError{Op: "read idempotency key", Key: stored.ID,
				Err: fmt.Errorf("%s record has no response", stored.State)}
		}
		return Execution{Verdict: Replayed, Response: *stored.Response}, false, nil
	case Started:
		if left := stored.LeaseUntil.Sub(now); left > 0 {
			return Execution{Verdict: InFlight, RetryAfter: ceilSeconds(left)}, false, nil
		}
		return Execution{}, true, nil
	}
	return Execution{}, false, &KeyStoreError{Op: "read idempotency key", Key: stored.ID,
		Err: fmt.Errorf("unknown state %q", stored.State)}
}

// run runs the work of a claimed key and completes or releases the key.
func (s *Service) run(ctx context.Context, rec Record, etag string, work Work, tookOver bool) (Execution, error) {
	wctx, cancel := context.WithTimeout(ctx, s.lease())
	resp, err := work(wctx)
	cancel()
	if err == nil {
		rec.State = Succeeded
	} else if cresp, ok := clientResponse(err); ok {
		rec.State, resp = Failed, cresp
	} else {
		if rerr := s.release(ctx, rec.ID, etag); rerr != nil {
			// The key stays Started until its lease ends; retries are
			// InFlight until then, and take it over after.
			return Execution{}, fmt.Errorf("idempotency key %s: work: %w (and its release failed: %v)", rec.ID, err, rerr)
		}
		return Execution{}, fmt.Errorf("idempotency key %s: work: %w", rec.ID, err)
	}
	rec.Response = &resp
	rec.UpdatedAt = s.now()
	rec.LeaseUntil = time.Time{}
	sctx, cancel := finishing(ctx)
	_, err = s.Store.Replace(sctx, rec, etag)
	cancel()
	if err != nil {
		if errors.Is(err, ErrFenced) {
			return Execution{}, fmt.Errorf("complete idempotency key %s: %w", rec.ID, err)
		}
		// The answer was not stored: free the key, so a retry runs the work
		// again at once rather than waiting out the lease (the work must
		// tolerate a second run either way). When the completion did land
		// and only its answer was lost, the release is fenced by the ETag
		// and the stored answer stands for the retry.
		if rerr := s.release(ctx, rec.ID, etag); rerr != nil {
			// The record stays Started: after its lease a retry takes it
			// over.
			return Execution{}, fmt.Errorf("%w (and releasing the key failed: %v)", err, rerr)
		}
		return Execution{}, err
	}
	return Execution{Verdict: Executed, Response: resp, TookOver: tookOver}, nil
}

// release frees a key whose answer was not stored, under a finishing
// deadline of its own: a completion that timed out has spent its own, and
// a release on it would never reach the store. Fenced is fine: another
// attempt, or this one's completion after all, holds the key.
func (s *Service) release(ctx context.Context, id, etag string) error {
	sctx, cancel := finishing(ctx)
	defer cancel()
	if err := s.Store.Release(sctx, id, etag); err != nil && !errors.Is(err, ErrFenced) {
		return err
	}
	return nil
}

// finishing is the context of one write that finishes a key's attempt:
// FinishTimeout long, and not ended by ctx, which has often ended already.
func finishing(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), FinishTimeout)
}

func (s *Service) now() time.Time {
	if s.Now != nil {
		return s.Now().UTC()
	}
	return time.Now().UTC()
}

func (s *Service) lease() time.Duration {
	if s.Lease > 0 {
		return s.Lease
	}
	return DefaultLease
}

func (s *Service) ttlSeconds() int64 {
	ttl := s.TTL
	if ttl <= 0 {
		ttl = DefaultTTL
	}
	return int64(ceilSeconds(max(ttl, s.lease())) / time.Second)
}

// ceilSeconds rounds d up to whole seconds, at least one.
func ceilSeconds(d time.Duration) time.Duration {
	return max(1, (d+time.Second-1)/time.Second) * time.Second
}

// newOwner returns a random token naming one attempt.
func newOwner() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b) // never fails (crypto/rand documents it)
	return hex.EncodeToString(b)
}
