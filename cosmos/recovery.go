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
// account (GET /) before its first request and, when that read fails, keeps
// the error for its refresh interval (five minutes): every request meanwhile
// fails with it without being sent, even after Cosmos DB is back. And while
// it has never read the account, the read runs detached from the caller's
// context, for up to a minute against a Cosmos DB that does not answer
// (cosmos_global_endpoint_manager.go, Update and its policy).
//
// So until one request has had an answer from the data plane, a failure that
// may be that cached error makes the Store build a new client (whose first
// request reads the account afresh), at most once per rebuildInterval, and
// every call returns when its context ends, whatever the SDK still waits
// for (that wait goes on in the background, a minute at most, one per
// rebuilt client). After that answer the SDK caches no failure any more: nothing is
// rebuilt, and calls run directly.
type recovery struct {
	ready    atomic.Bool
	mu       sync.Mutex
	rebuilt  time.Time
	rebuilds atomic.Int64
}

// rebuildInterval bounds how often a client is rebuilt while the account
// cannot be read: well below the consumer's 5 s recovery promise.
const rebuildInterval = 500 * time.Millisecond

// call runs f on the current container client and lets recovery see the
// outcome.
func call[T any](ctx context.Context, s *Store, f func(*azcosmos.ContainerClient) (T, error)) (T, error) {
	c := s.conn.Load()
	if s.recovery.ready.Load() {
		return f(c.container)
	}
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := f(c.container)
		done <- result{v, err}
	}()
	select {
	case r := <-done:
		s.observe(r.err)
		return r.v, r.err
	case <-ctx.Done():
		s.observe(ctx.Err())
		var zero T
		return zero, ctx.Err()
	}
}

// observe marks the Store ready after a data-plane answer, and rebuilds the
// client after a failure that may be the SDK's cached account error.
func (s *Store) observe(err error) {
	status := statusOf(err)
	if err == nil || status != 0 && status != http.StatusUnauthorized && status != http.StatusForbidden && status < 500 {
		s.recovery.ready.Store(true)
		return
	}
	r := &s.recovery
	r.mu.Lock()
	defer r.mu.Unlock()
	if time.Since(r.rebuilt) < rebuildInterval {
		return
	}
	c, cerr := s.connect()
	if cerr != nil {
		return // options were checked by Open; keep the client there is
	}
	// The old client is left to in-flight requests and the collector:
	// Close would release caches they may still use.
	s.conn.Store(c)
	r.rebuilt = time.Now()
	r.rebuilds.Add(1)
}
