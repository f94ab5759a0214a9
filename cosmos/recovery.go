package cosmos

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
)

// conn is one SDK client and the container handle made from it.
type conn struct {
	client    *azcosmos.Client
	container *azcosmos.ContainerClient
	// answered: a request on this client had an answer from the data
	// plane, so its SDK has read the account and caches no failure any more.
	answered atomic.Bool
}

func (s *Store) connect() (*conn, error) {
	client, err := s.dial()
	if err != nil {
		return nil, err
	}
	c, err := client.NewContainer(s.database, s.containerID)
	if err != nil {
		return nil, fmt.Errorf("cosmos container %s/%s: %w", s.database, s.containerID, err)
	}
	return &conn{client: client, container: c}, nil
}

// recovery gets a Store past a failed start. azcosmos v1.5.0 reads the
// account (GET /) before a client's first request and, when that read fails,
// keeps the error for its refresh interval (five minutes): every request on
// that client meanwhile fails with it without being sent, even after Cosmos
// DB is back. And while it has never read the account, the read runs
// detached from the caller's context, for up to a minute against a Cosmos DB
// that does not answer (cosmos_global_endpoint_manager.go, Update and its
// policy).
//
// So until a client has had an answer from the data plane, a failure on it
// that may be that cached error makes the Store build a new client (whose
// first request reads the account afresh), at most once per
// rebuildInterval, and every call returns when its context ends, whatever the
// SDK still waits for (that wait goes on in the background, a minute at
// most, one per rebuilt client). Readiness belongs to the client, not to the
// Store: an answer to a request sent on a client the Store has since
// replaced says nothing of the replacement, which may already keep a refused
// account read (a handler restarted as a 403 window opens, docs/evidence/chaos.md);
// the Store goes back to the client that answered instead. Once the current
// client has answered, nothing is rebuilt and calls run directly.
type recovery struct {
	mu      sync.Mutex
	rebuilt time.Time
}

// rebuildInterval bounds how often a client is rebuilt while the account
// cannot be read: well below the consumer's 5 s recovery promise.
const rebuildInterval = 500 * time.Millisecond

// call runs f on the orders container of the current client and lets
// recovery see the outcome.
func call[T any](ctx context.Context, s *Store, f func(*azcosmos.ContainerClient) (T, error)) (T, error) {
	return callConn(ctx, s, func(c *conn) (T, error) { return f(c.container) })
}

// callOn is call for another container of the Store's database (the
// idempotency keys'), made from the same client whose outcome recovery sees.
func callOn[T any](ctx context.Context, s *Store, containerID string, f func(*azcosmos.ContainerClient) (T, error)) (T, error) {
	return callConn(ctx, s, func(c *conn) (T, error) {
		// A container client is a name and a link: making one costs no I/O.
		cc, err := c.client.NewContainer(s.database, containerID)
		if err != nil {
			var zero T
			return zero, fmt.Errorf("cosmos container %s/%s: %w", s.database, containerID, err)
		}
		return f(cc)
	})
}

func callConn[T any](ctx context.Context, s *Store, f func(*conn) (T, error)) (T, error) {
	c := s.conn.Load()
	if c.answered.Load() {
		return f(c)
	}
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := f(c)
		done <- result{v, err}
	}()
	select {
	case r := <-done:
		s.observe(c, r.err)
		return r.v, r.err
	case <-ctx.Done():
		s.observe(c, ctx.Err())
		var zero T
		return zero, ctx.Err()
	}
}

// observe marks c answered after a data-plane answer, and replaces the
// current client after a failure on it that may be the SDK's cached account
// error.
func (s *Store) observe(c *conn, err error) {
	status := statusOf(err)
	if err == nil || status != 0 && status != http.StatusUnauthorized && status != http.StatusForbidden && status < 500 {
		c.answered.Store(true)
		if cur := s.conn.Load(); cur != c && !cur.answered.Load() {
			s.conn.CompareAndSwap(cur, c)
		}
		return
	}
	r := &s.recovery
	r.mu.Lock()
	defer r.mu.Unlock()
	// A failure on a client already replaced says nothing of the current
	// one, nor does one on a client that has answered.
	if s.conn.Load() != c || c.answered.Load() || time.Since(r.rebuilt) < rebuildInterval {
		return
	}
	next, cerr := s.connect()
	if cerr != nil {
		return // options were checked by Open; keep the client there is
	}
	// The old client is left to in-flight requests and the collector:
	// Close would release caches they may still use. An answer on an older
	// client may have made it current meanwhile: that one stays.
	if s.conn.CompareAndSwap(c, next) {
		r.rebuilt = time.Now()
	}
}
