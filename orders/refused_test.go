package orders_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	. "github.com/ordersink/orders-consumer/orders"
	"github.com/ordersink/orders-consumer/orders/orderstest"
)

// failingReader is an OrderReader whose reads fail with err.
type failingReader struct{ err error }

func (f failingReader) ReadOrder(context.Context, string) (json.RawMessage, error) { return nil, f.err }

// A message the rules refuse is judged against the order stored under its
// orderId first (docs/adr/0015-the-key-first.md): the content accepted before
// a rule was tightened is a duplicate of it, not a refusal; other content, an
// unknown orderId and a body without one are refused as before; a read that
// fails leaves the message to the broker rather than park it.
func TestRefusedBodyIsJudgedAgainstTheStoredOrderFirst(t *testing.T) {
	ctx := context.Background()
	store := orderstest.NewMemStore()
	body := []byte(exampleBody)
	if r := (&Processor{Store: store}).Process(ctx, Message{Body: body, MessageID: "m-1", DeliveryCount: 1}); r.Outcome != Created {
		t.Fatalf("first delivery: %v", r.Outcome)
	}
	// The rule tightened since: no order's event may exceed a byte.
	strict := func(reader OrderReader) *Processor {
		return &Processor{Store: store, Reader: reader, EventBudget: func(json.RawMessage) error { return errors.New("over one byte") }}
	}
	changed := []byte(strings.Replace(exampleBody, `"CUST-42"`, `"CUST-43"`, 1))
	other := orderstest.ExampleBodyWithID("ORD-NEVER-STORED")
	transient := &StoreError{Op: "read order", OrderID: orderstest.ExampleOrderID, IsTransient: true, Err: errors.New("503")}
	for _, tc := range []struct {
		name   string
		p      *Processor
		body   []byte
		want   Outcome
		reason Reason
	}{
		{"the stored content, resent", strict(store), body, Duplicate, ""},
		{"other content", strict(store), changed, Invalid, ValidationFailed},
		{"an orderId never stored", strict(store), other, Invalid, ValidationFailed},
		{"no reader", strict(nil), body, Invalid, ValidationFailed},
		{"the read fails", strict(failingReader{transient}), body, Transient, ""},
		{"not JSON: no stored content can be it", strict(store), []byte(`{"orderId":`), Invalid, MalformedMessage},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.p.Process(ctx, Message{Body: tc.body, MessageID: "m-2", DeliveryCount: 2})
			if r.Outcome != tc.want || r.Reason != tc.reason {
				t.Errorf("%v %s (%s); want %v %s", r.Outcome, r.Reason, r.Description, tc.want, tc.reason)
			}
		})
	}
	docs, _ := store.PartitionDocuments(ctx, orderstest.ExampleOrderID)
	if len(docs) != 2 {
		t.Errorf("partition holds %d documents, want the order and its event only", len(docs))
	}
}
