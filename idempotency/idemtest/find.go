package idemtest

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/ordersink/orders-consumer/idempotency"
	"github.com/ordersink/orders-consumer/orders"
)

// FindByOrderID returns a record of client and operation that names orderID,
// or idempotency.ErrNotFound, as cosmos.KeyStore does (handler.SubmissionFinder).
func (s *MemStore) FindByOrderID(ctx context.Context, client, operation, orderID string) (idempotency.Record, error) {
	if err := ctx.Err(); err != nil {
		return idempotency.Record{}, storeError("find idempotency key", orderID, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, doc := range s.docs {
		var r idempotency.Record
		if err := json.Unmarshal(doc, &r); err != nil {
			return idempotency.Record{}, &orders.StoreError{Op: "find idempotency key", OrderID: orderID, Err: err}
		}
		if r.OrderID == orderID && r.Client == client && r.Operation == operation {
			return r, nil
		}
	}
	return idempotency.Record{}, idempotency.ErrNotFound
}

// Finder is a key store that finds records by orderId.
type Finder interface {
	idempotency.Store
	FindByOrderID(ctx context.Context, client, operation, orderID string) (idempotency.Record, error)
}

// TestFinder checks FindByOrderID on a store: it finds a record by the
// order it names, only under its own client and operation, whatever the
// record's state, and nothing for an order no record names.
func TestFinder(t *testing.T, s Finder) {
	ctx := context.Background()
	orderID := "ORD-find-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	now := time.Now().UTC().Truncate(time.Second)
	r := idempotency.Record{Client: "key:0123456789abcdef", Operation: "SubmitOrder", Key: "k-" + orderID, OrderID: orderID,
		RequestHash: "sha256:aa", State: idempotency.Started, Owner: "o", LeaseUntil: now.Add(time.Minute),
		CreatedAt: now, UpdatedAt: now, TTL: 3600}
	r.ID = idempotency.Scope{Client: r.Client, Operation: r.Operation, Key: r.Key}.ID()
	if _, err := s.Claim(ctx, r); err != nil {
		t.Fatal(err)
	}
	got, err := s.FindByOrderID(ctx, r.Client, r.Operation, orderID)
	if err != nil || got.ID != r.ID || got.RequestHash != r.RequestHash || got.State != idempotency.Started {
		t.Errorf("find %s: %+v, %v", orderID, got, err)
	}
	for _, miss := range []struct{ client, operation, orderID string }{
		{"key:fedcba9876543210", r.Operation, orderID},
		{r.Client, "OtherOperation", orderID},
		{r.Client, r.Operation, orderID + "-other"},
	} {
		if got, err := s.FindByOrderID(ctx, miss.client, miss.operation, miss.orderID); !errors.Is(err, idempotency.ErrNotFound) {
			t.Errorf("find %+v: %+v, %v; want ErrNotFound", miss, got, err)
		}
	}
}
