package retrying

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ordersink/orders-consumer/orders"
)

// readerStore is an orders.Store that reads orders: down for its first
// failures reads, then it finds doc.
type readerStore struct {
	outageStore
	failures int
	reads    int
	doc      json.RawMessage
}

func (s *readerStore) ReadOrder(_ context.Context, orderID string) (json.RawMessage, error) {
	s.reads++
	if s.reads <= s.failures { // refused at once; Health paces the next read
		return nil, &orders.StoreError{Op: "read order", OrderID: orderID, IsTransient: true, Err: errors.New("connection refused")}
	}
	return s.doc, nil
}

// ReadOrder holds through an outage as the writes do: the read fails while
// the store is away, then answers with the stored order, within the
// caller's deadline and without the caller seeing the failures.
func TestReadOrderHoldsThroughAnOutage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &readerStore{failures: 5, doc: json.RawMessage(`{"id":"ORD-1"}`)}
		r := &Store{Store: s, Health: &Health{ProbeInterval: 100 * time.Millisecond}}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		doc, err := r.ReadOrder(ctx, "ORD-1")
		if err != nil || string(doc) != `{"id":"ORD-1"}` || s.reads != 6 {
			t.Errorf("ReadOrder = %s, %v after %d reads; want the order after 6 reads", doc, err, s.reads)
		}
	})
}

// A store that reads no orders fails the read for good, so the message is
// judged at once (its refusal) instead of held to its deadline.
func TestReadOrderOfAStoreThatReadsNone(t *testing.T) {
	r := &Store{Store: &outageStore{}}
	_, err := r.ReadOrder(context.Background(), "ORD-1")
	if err == nil || orders.IsTransient(err) {
		t.Errorf("ReadOrder = %v, want a final error", err)
	}
}
