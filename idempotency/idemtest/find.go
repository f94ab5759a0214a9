package idemtest

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/ordersink/orders-consumer/idempotency"
	"github.com/ordersink/orders-consumer/orders"
)

// FindByOrderID returns the records of client and operation that name
// orderID, in any state, as cosmos.KeyStore does (handler.SubmissionFinder).
func (s *MemStore) FindByOrderID(ctx context.Context, client, operation, orderID string) ([]idempotency.Record, error) {
	if err := ctx.Err(); err != nil {
		return nil, storeError("find idempotency key", orderID, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []idempotency.Record
	for _, doc := range s.docs {
		var r idempotency.Record
		if err := json.Unmarshal(doc, &r); err != nil {
			return nil, &orders.StoreError{Op: "find idempotency key", OrderID: orderID, Err: err}
		}
		if r.OrderID == orderID && r.Client == client && r.Operation == operation {
			out = append(out, r)
		}
	}
	return out, nil
}

// Finder is a key store that finds records by orderId.
type Finder interface {
	idempotency.Store
	FindByOrderID(ctx context.Context, client, operation, orderID string) ([]idempotency.Record, error)
}

// TestFinder checks FindByOrderID on a store: it returns every record that
// names the order under its own client and operation, whatever its state
// (a started one and a completed one here), and nothing for another client,
// another operation or an order no record names.
func TestFinder(t *testing.T, s Finder) {
	ctx := context.Background()
	orderID := "ORD-find-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	now := time.Now().UTC().Truncate(time.Second)
	record := func(key string, state idempotency.State) idempotency.Record {
		r := idempotency.Record{Client: "key:0123456789abcdef", Operation: "SubmitOrder", Key: key, OrderID: orderID,
			RequestHash: "sha256:aa", State: state, Owner: "o", CreatedAt: now, UpdatedAt: now, TTL: 3600}
		r.ID = idempotency.Scope{Client: r.Client, Operation: r.Operation, Key: r.Key}.ID()
		if state == idempotency.Started {
			r.LeaseUntil = now.Add(time.Minute)
		} else {
			r.Response = &idempotency.Response{Status: 202, Body: []byte(`{}`)}
		}
		if _, err := s.Claim(ctx, r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	started, done := record("k1-"+orderID, idempotency.Started), record("k2-"+orderID, idempotency.Succeeded)

	got, err := s.FindByOrderID(ctx, started.Client, started.Operation, orderID)
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]string, 0, len(got))
	for _, r := range got {
		ids = append(ids, r.ID)
		if r.ID == done.ID && (r.State != idempotency.Succeeded || r.Response == nil || r.Response.Status != 202 || r.RequestHash != done.RequestHash) {
			t.Errorf("found %+v, want the stored record", r)
		}
	}
	slices.Sort(ids)
	want := []string{started.ID, done.ID}
	slices.Sort(want)
	if !slices.Equal(ids, want) {
		t.Errorf("found %v, want %v", ids, want)
	}
	for _, miss := range []struct{ client, operation, orderID string }{
		{"key:fedcba9876543210", started.Operation, orderID},
		{started.Client, "OtherOperation", orderID},
		{started.Client, started.Operation, orderID + "-other"},
	} {
		if got, err := s.FindByOrderID(ctx, miss.client, miss.operation, miss.orderID); err != nil || len(got) != 0 {
			t.Errorf("find %+v: %+v, %v; want none", miss, got, err)
		}
	}
}
