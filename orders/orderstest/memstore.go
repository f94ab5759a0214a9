// Package orderstest provides an in-memory [orders.Store] for tests and
// benchmarks, and [TestStore], the suite every store must pass. MemStore keeps
// the documents Cosmos DB would hold, partition by partition, so a test can
// read back what a store wrote whichever store it runs on.
package orderstest

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/ordersink/orders-consumer/orders"
)

// MaxBatchBytes is the largest acceptance batch MemStore takes: Cosmos DB
// refuses a transactional batch over 2 MB (cosmos.MaxBatchBytes) on every
// attempt, so an order that large must not be created here either.
const MaxBatchBytes = 2 << 20

// MemStore is an [orders.Store] and [orders.StatusStore] held in memory. Its
// batches are atomic, as Cosmos DB's are. It is safe for concurrent use.
type MemStore struct {
	mu sync.Mutex
	// partitions holds the documents of each orderId by document id.
	partitions map[string]map[string]json.RawMessage
	bodies     map[string]orders.ParkedBody
	// Fail, when set, is returned by every call.
	Fail error
}

// NewMemStore returns an empty MemStore.
func NewMemStore() *MemStore {
	return &MemStore{partitions: map[string]map[string]json.RawMessage{}}
}

// CreateOrder writes the order and its outbox event, all or nothing, unless
// the order exists; then it returns the stored fingerprint.
func (s *MemStore) CreateOrder(ctx context.Context, b *orders.AcceptanceBatch) (*orders.StoredFingerprint, error) {
	const op = "create order"
	size := 0
	for _, d := range b.Documents {
		size += len(d.Body)
	}
	if size > MaxBatchBytes {
		return nil, &orders.StoreError{Op: op, OrderID: b.OrderID,
			Err: fmt.Errorf("acceptance batch of %d bytes: Cosmos DB accepts at most %d bytes (2 MB) in one batch", size, MaxBatchBytes)}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.failure(ctx, op, b.OrderID); err != nil {
		return nil, err
	}
	p := s.partition(b.OrderID)
	if stored, ok := p[b.OrderID]; ok {
		return fingerprintOf(b.OrderID, stored)
	}
	for _, d := range b.Documents[1:] {
		if _, ok := p[d.ID]; ok {
			// Cosmos DB rolls the batch back; no redelivery can fix this.
			return nil, &orders.StoreError{Op: op, OrderID: b.OrderID, Err: fmt.Errorf("document %s exists without its order", d.ID)}
		}
	}
	for _, d := range b.Documents {
		p[d.ID] = d.Body
	}
	return nil, nil
}

// RecordConflict keeps the conflict under its deterministic id; a record that
// exists already is left as it is.
func (s *MemStore) RecordConflict(ctx context.Context, c orders.Conflict) error {
	doc, err := c.Document()
	if err != nil {
		return &orders.StoreError{Op: "record conflict", OrderID: c.OrderID, Err: err}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.failure(ctx, "record conflict", c.OrderID); err != nil {
		return err
	}
	p := s.partition(c.OrderID)
	if _, ok := p[c.ID()]; !ok {
		p[c.ID()] = doc
	}
	return nil
}

// ApplyStatus stores the change unless the stored status has the same or a
// newer version. The lock makes every write conditional on what it read.
func (s *MemStore) ApplyStatus(ctx context.Context, c orders.StatusChange, messageID string, at time.Time) (orders.StatusApplied, error) {
	const op = "apply status"
	doc, err := c.Document(messageID, at)
	if err != nil {
		return orders.StatusApplied{}, &orders.StoreError{Op: op, OrderID: c.OrderID, Err: err}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.failure(ctx, op, c.OrderID); err != nil {
		return orders.StatusApplied{}, err
	}
	p := s.partition(c.OrderID)
	id := orders.StatusDocumentID(c.OrderID)
	var prev *orders.StoredStatus
	if raw, ok := p[id]; ok {
		prev = &orders.StoredStatus{}
		if err := json.Unmarshal(raw, prev); err != nil {
			return orders.StatusApplied{}, &orders.StoreError{Op: op, OrderID: c.OrderID, Err: fmt.Errorf("status document %s: %w", id, err)}
		}
		if prev.Version >= c.Version {
			return orders.StatusApplied{Previous: prev, Attempts: 1}, nil
		}
	}
	p[id] = doc
	return orders.StatusApplied{Applied: true, Previous: prev, Attempts: 1}, nil
}

// CreateDocument writes a document as is, failing when its id exists, for
// tests that need a state the consumer never produces on its own.
func (s *MemStore) CreateDocument(_ context.Context, orderID string, doc []byte) error {
	var v struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(doc, &v); err != nil || v.ID == "" {
		return fmt.Errorf("create document in %s: no id (%v)", orderID, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.partition(orderID)
	if _, ok := p[v.ID]; ok {
		return fmt.Errorf("create document %s: 409 Conflict", v.ID)
	}
	p[v.ID] = slices.Clone(doc)
	return nil
}

// PartitionDocuments returns every document in an order's partition, in no
// particular order, as cosmos.Store does.
func (s *MemStore) PartitionDocuments(_ context.Context, orderID string) ([]json.RawMessage, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []json.RawMessage
	for _, d := range s.partitions[orderID] {
		out = append(out, d)
	}
	return out, nil
}

// ReadOrder returns the order document of orderID, nil when there is none,
// as cosmos.Store's point read does.
func (s *MemStore) ReadOrder(ctx context.Context, orderID string) (json.RawMessage, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.failure(ctx, "read order", orderID); err != nil {
		return nil, err
	}
	doc, ok := s.partitions[orderID][orderID]
	if !ok {
		return nil, nil
	}
	return slices.Clone(doc), nil
}

// Documents returns every document of a type across partitions.
func (s *MemStore) Documents(_ context.Context, docType string) ([]json.RawMessage, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []json.RawMessage
	for _, p := range s.partitions {
		for _, d := range p {
			if typeOf(d) == docType {
				out = append(out, d)
			}
		}
	}
	return out, nil
}

// Orders returns how many orders are stored.
func (s *MemStore) Orders() int { return s.count(orders.TypeOrder) }

// Conflicts returns how many distinct conflict records are stored.
func (s *MemStore) Conflicts() int { return s.count(orders.TypeConflict) }

func (s *MemStore) count(docType string) int {
	docs, _ := s.Documents(context.Background(), docType)
	return len(docs)
}

// failure is the error a call meets before it writes: Fail, or the context's
// end, which Cosmos DB reports as a transient failure with no answer.
func (s *MemStore) failure(ctx context.Context, op, orderID string) error {
	if s.Fail != nil {
		return s.Fail
	}
	if err := ctx.Err(); err != nil {
		return &orders.StoreError{Op: op, OrderID: orderID, IsTransient: true, Err: err}
	}
	return nil
}

func (s *MemStore) partition(orderID string) map[string]json.RawMessage {
	p, ok := s.partitions[orderID]
	if !ok {
		p = map[string]json.RawMessage{}
		s.partitions[orderID] = p
	}
	return p
}

func fingerprintOf(orderID string, doc json.RawMessage) (*orders.StoredFingerprint, error) {
	fp, err := orders.ParseStoredFingerprint(slices.Clone(doc))
	if err != nil {
		return nil, &orders.StoreError{Op: "read order", OrderID: orderID, Err: err}
	}
	return fp, nil
}

func typeOf(doc json.RawMessage) string {
	var v struct {
		Type string `json:"type"`
	}
	_ = json.Unmarshal(doc, &v)
	return v.Type
}

// ParkBody keeps a parked body under its id.
func (s *MemStore) ParkBody(_ context.Context, p orders.ParkedBody) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.Fail != nil {
		return s.Fail
	}
	if s.bodies == nil {
		s.bodies = map[string]orders.ParkedBody{}
	}
	s.bodies[p.ID()] = p
	return nil
}

// ParkedBodies returns how many distinct parked bodies are stored.
func (s *MemStore) ParkedBodies() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.bodies)
}
