package idemtest

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/ordersink/orders-consumer/idempotency"
)

// Counting is an [idempotency.Store] that counts the calls it passes on to
// Store: each is one round trip to Cosmos DB for cosmos.KeyStore.
type Counting struct {
	Store                             idempotency.Store
	claims, reads, replaces, releases atomic.Int64
}

// Calls is how many calls of each kind a Counting store passed on.
type Calls struct{ Claims, Reads, Replaces, Releases int64 }

// Total is the number of calls, the round trips of a Cosmos store.
func (c Calls) Total() int64 { return c.Claims + c.Reads + c.Replaces + c.Releases }

func (c Calls) String() string {
	return fmt.Sprintf("%d (claim %d, read %d, replace %d, release %d)", c.Total(), c.Claims, c.Reads, c.Replaces, c.Releases)
}

// Calls returns the counts so far and sets them back to zero.
func (s *Counting) Calls() Calls {
	return Calls{Claims: s.claims.Swap(0), Reads: s.reads.Swap(0), Replaces: s.replaces.Swap(0), Releases: s.releases.Swap(0)}
}

// Claim counts and passes on.
func (s *Counting) Claim(ctx context.Context, r idempotency.Record) (string, error) {
	s.claims.Add(1)
	return s.Store.Claim(ctx, r)
}

// Read counts and passes on.
func (s *Counting) Read(ctx context.Context, id string) (idempotency.Record, error) {
	s.reads.Add(1)
	return s.Store.Read(ctx, id)
}

// Replace counts and passes on.
func (s *Counting) Replace(ctx context.Context, r idempotency.Record, etag string) (string, error) {
	s.replaces.Add(1)
	return s.Store.Replace(ctx, r, etag)
}

// Release counts and passes on.
func (s *Counting) Release(ctx context.Context, id, etag string) error {
	s.releases.Add(1)
	return s.Store.Release(ctx, id, etag)
}
