package idemtest

import (
	"context"
	"encoding/json"

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
