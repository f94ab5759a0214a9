package handlertest

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ordersink/orders-consumer/orders"
	"github.com/ordersink/orders-consumer/orders/orderstest"
)

// Store is what the tests need of the store behind a handler: the
// consumer's two interfaces and reading back what was written.
// orderstest.MemStore and cosmostest.Readable are ones.
type Store interface {
	orders.Store
	orders.StatusStore
	ParkBody(ctx context.Context, p orders.ParkedBody) error
	PartitionDocuments(ctx context.Context, orderID string) ([]json.RawMessage, error)
	ReadOrder(ctx context.Context, orderID string) (json.RawMessage, error)
	Documents(ctx context.Context, docType string) ([]json.RawMessage, error)
}

// UniqueOrder returns the contract's example order under a fresh orderId, so
// tests share one database without meeting.
func UniqueOrder(t testing.TB) (id string, body []byte) {
	id = fmt.Sprintf("ORD-%s-%d", strings.ReplaceAll(t.Name(), "/", "-"), time.Now().UnixNano())
	return id, orderstest.ExampleBodyWithID(id)
}

// Partition returns the documents of orderID's partition in store, decoded.
func Partition(t *testing.T, store Store, orderID string) []map[string]any {
	t.Helper()
	docs, err := store.PartitionDocuments(context.Background(), orderID)
	if err != nil {
		t.Fatalf("read partition %s: %v", orderID, err)
	}
	out := make([]map[string]any, 0, len(docs))
	for _, d := range docs {
		var m map[string]any
		if err := json.Unmarshal(d, &m); err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
	return out
}

// DocumentsOfType returns the documents whose type is typ.
func DocumentsOfType(docs []map[string]any, typ string) []map[string]any {
	var out []map[string]any
	for _, d := range docs {
		if d["type"] == typ {
			out = append(out, d)
		}
	}
	return out
}
