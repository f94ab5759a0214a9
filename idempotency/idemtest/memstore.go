// Package idemtest provides an in-memory [idempotency.Store] for tests and
// benchmarks, and [TestStore], the suite every key store must pass.
package idemtest

import (
	"context"
	"encoding/json"
	"strconv"
	"sync"

	"github.com/ordersink/orders-consumer/idempotency"
)

// MemStore is an [idempotency.Store] held in memory. It keeps each record
// as the JSON document Cosmos DB would hold, with an ETag that changes on
// every write, so conditional writes behave as they do there. Records do
// not expire. It is safe for concurrent use.
type MemStore struct {
	mu    sync.Mutex
	docs  map[string]json.RawMessage
	etags map[string]string
	seq   int64
}

// NewMemStore returns an empty MemStore.
func NewMemStore() *MemStore {
	return &MemStore{docs: map[string]json.RawMessage{}, etags: map[string]string{}}
}

// Claim creates r unless a record with its id exists.
func (s *MemStore) Claim(ctx context.Context, r idempotency.Record) (string, error) {
	doc, err := s.encode(ctx, "claim idempotency key", r)
	if err != nil {
		return "", err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.docs[r.ID]; ok {
		return "", idempotency.ErrExists
	}
	return s.put(r.ID, doc), nil
}

// Read returns the record of id with its ETag.
func (s *MemStore) Read(ctx context.Context, id string) (idempotency.Record, error) {
	if err := ctx.Err(); err != nil {
		return idempotency.Record{}, storeError("read idempotency key", id, err)
	}
	s.mu.Lock()
	doc, ok := s.docs[id]
	etag := s.etags[id]
	s.mu.Unlock()
	if !ok {
		return idempotency.Record{}, idempotency.ErrNotFound
	}
	var r idempotency.Record
	if err := json.Unmarshal(doc, &r); err != nil {
		return idempotency.Record{}, &idempotency.KeyStoreError{Op: "read idempotency key", Key: id, Err: err}
	}
	r.ETag = etag
	return r, nil
}

// Replace writes r if the stored record's ETag is etag.
func (s *MemStore) Replace(ctx context.Context, r idempotency.Record, etag string) (string, error) {
	doc, err := s.encode(ctx, "replace idempotency key", r)
	if err != nil {
		return "", err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if cur, ok := s.etags[r.ID]; !ok || cur != etag {
		return "", idempotency.ErrFenced
	}
	return s.put(r.ID, doc), nil
}

// Release deletes the record of id if its ETag is etag.
func (s *MemStore) Release(ctx context.Context, id, etag string) error {
	if err := ctx.Err(); err != nil {
		return storeError("release idempotency key", id, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if cur, ok := s.etags[id]; !ok || cur != etag {
		return idempotency.ErrFenced
	}
	delete(s.docs, id)
	delete(s.etags, id)
	return nil
}

// Document returns the stored JSON of id, nil when there is none.
func (s *MemStore) Document(_ context.Context, id string) (json.RawMessage, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.docs[id], nil
}

func (s *MemStore) encode(ctx context.Context, op string, r idempotency.Record) (json.RawMessage, error) {
	if err := ctx.Err(); err != nil {
		return nil, storeError(op, r.ID, err)
	}
	doc, err := json.Marshal(r)
	if err != nil {
		return nil, &idempotency.KeyStoreError{Op: op, Key: r.ID, Err: err}
	}
	return doc, nil
}

// put stores doc under id with a new ETag; s.mu is held.
func (s *MemStore) put(id string, doc json.RawMessage) string {
	s.seq++
	etag := strconv.Quote(strconv.FormatInt(s.seq, 10))
	s.docs[id], s.etags[id] = doc, etag
	return etag
}

// storeError is the transient error of a call whose context ended, as
// cosmos.KeyStore reports it.
func storeError(op, id string, err error) error {
	return &idempotency.KeyStoreError{Op: op, Key: id, IsTransient: true, Err: err}
}
