// Package orderstest provides an in-memory orders.Store for tests and
// benchmarks: the semantics of Cosmos create-if-absent without the network.
package orderstest

import (
	"context"
	"sync"

	"github.com/ordersink/orders-consumer/orders"
)

// MemStore is an orders.Store held in memory. It is safe for concurrent use.
type MemStore struct {
	mu        sync.Mutex
	orders    map[string]orders.StoredFingerprint
	conflicts map[string]orders.Conflict
	// Fail, when set, is returned by every call.
	Fail error
}

// NewMemStore returns an empty MemStore.
func NewMemStore() *MemStore {
	return &MemStore{orders: map[string]orders.StoredFingerprint{}, conflicts: map[string]orders.Conflict{}}
}

// CreateOrder stores the order's fingerprint unless the id exists.
func (s *MemStore) CreateOrder(_ context.Context, o *orders.Order, a orders.Acceptance) (*orders.StoredFingerprint, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.Fail != nil {
		return nil, s.Fail
	}
	if fp, ok := s.orders[o.ID]; ok {
		return &fp, nil
	}
	s.orders[o.ID] = orders.StoredFingerprint{Hash: o.Hash, Version: orders.HashVersion, MessageID: a.MessageID, AcceptedAt: a.AcceptedAt.UTC()}
	return nil, nil
}

// RecordConflict keeps the conflict under its deterministic id.
func (s *MemStore) RecordConflict(_ context.Context, c orders.Conflict) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.Fail != nil {
		return s.Fail
	}
	s.conflicts[c.ID()] = c
	return nil
}

// Orders returns how many orders are stored.
func (s *MemStore) Orders() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.orders)
}

// Conflicts returns how many distinct conflict records are stored.
func (s *MemStore) Conflicts() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conflicts)
}
