package orders_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/ordersink/orders-consumer/orders"
	"github.com/ordersink/orders-consumer/orders/orderstest"
)

// exampleBody is the contract's example order.
const exampleBody = orderstest.ExampleBody

func TestProcessorOutcomes(t *testing.T) {
	ctx := context.Background()
	store := orderstest.NewMemStore()
	p := &Processor{Store: store}
	msg := func(body string, delivery int) Message {
		return Message{Body: []byte(body), MessageID: "ORD-2026-000123", DeliveryCount: delivery}
	}

	r := p.Process(ctx, msg(exampleBody, 1))
	if r.Outcome != Created || r.OrderID != "ORD-2026-000123" || r.IncomingHash == "" {
		t.Fatalf("first delivery: %+v", r)
	}
	r = p.Process(ctx, msg(strings.Replace(exampleBody, `"web-shop"`, `"retry-job","retry":1`, 1), 2))
	if r.Outcome != Duplicate || r.StoredHash != r.IncomingHash || r.Reason != "" {
		t.Fatalf("redelivery: %+v", r)
	}
	other := strings.Replace(exampleBody, `"quantity":1`, `"quantity":2`, 1)
	other = strings.Replace(other, `"44.98"`, `"49.98"`, 1)
	r = p.Process(ctx, msg(other, 1))
	if r.Outcome != Mismatch || r.Reason != HashMismatch || r.StoredHash == r.IncomingHash {
		t.Fatalf("mismatch: %+v", r)
	}
	if store.Conflicts() != 1 {
		t.Errorf("conflict records = %d, want 1", store.Conflicts())
	}
	p.Process(ctx, msg(other, 2))
	if store.Conflicts() != 1 {
		t.Errorf("a redelivered mismatch added a record: %d", store.Conflicts())
	}
	r = p.Process(ctx, msg(`{"orderId":"X"`, 1))
	if r.Outcome != Invalid || r.Reason != MalformedMessage {
		t.Fatalf("malformed: %+v", r)
	}
	r = p.Process(ctx, msg(strings.Replace(exampleBody, `"EUR"`, `"eur"`, 1), 1))
	if r.Outcome != Invalid || r.Reason != ValidationFailed || r.OrderID != "ORD-2026-000123" {
		t.Fatalf("invalid: %+v", r)
	}
}

func TestProcessorStoreFailures(t *testing.T) {
	throttled := &StoreError{Op: "create order", OrderID: "ORD-2026-000123", Status: 429, IsTransient: true, Err: errors.New("429 Too Many Requests")}
	tooLarge := &StoreError{Op: "create order", OrderID: "ORD-2026-000123", Status: 413, Err: errors.New("413 Request Entity Too Large")}
	tests := []struct {
		name     string
		err      error
		delivery int
		budget   int
		want     Outcome
		reason   Reason
	}{
		{"transient first delivery", throttled, 1, 0, Transient, ""},
		{"transient below budget", throttled, 8, 0, Transient, ""},
		{"transient at default budget", throttled, 9, 0, Exhausted, RetryBudgetExhausted},
		{"transient past budget", throttled, 12, 0, Exhausted, RetryBudgetExhausted},
		{"transient at custom budget", throttled, 3, 3, Exhausted, RetryBudgetExhausted},
		{"unknown error is transient", errors.New("boom"), 1, 0, Transient, ""},
		{"permanent store refusal", tooLarge, 1, 0, Invalid, ValidationFailed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			store := orderstest.NewMemStore()
			store.Fail = tc.err
			p := &Processor{Store: store, RetryBudget: tc.budget}
			r := p.Process(context.Background(), Message{Body: []byte(exampleBody), DeliveryCount: tc.delivery})
			if r.Outcome != tc.want || r.Reason != tc.reason {
				t.Fatalf("outcome = %s/%s, want %s/%s (%s)", r.Outcome, r.Reason, tc.want, tc.reason, r.Description)
			}
			if !errors.Is(r.Err, tc.err) {
				t.Errorf("Err = %v, want %v", r.Err, tc.err)
			}
			if tc.want != Transient && !strings.Contains(r.Description, tc.err.Error()) {
				t.Errorf("description %q does not carry the cause", r.Description)
			}
		})
	}
}

func TestProcessorMessageIDDiffers(t *testing.T) {
	id := PeekOrderID([]byte(exampleBody))
	for _, tc := range []struct {
		messageID string
		differs   bool
	}{
		{"some-guid", true},
		{id + ":0000000000000000", true}, // the rule's shape, another body's hash
		{id, false},                      // contract 1.x
		{MessageID(id, []byte(exampleBody)), false},
		{"", false},
	} {
		p := &Processor{Store: orderstest.NewMemStore()}
		r := p.Process(context.Background(), Message{Body: []byte(exampleBody), MessageID: tc.messageID, DeliveryCount: 1})
		if r.Outcome != Created || r.MessageIDDiffers != tc.differs {
			t.Errorf("MessageId %q: outcome %s, differs %v; want created, %v", tc.messageID, r.Outcome, r.MessageIDDiffers, tc.differs)
		}
	}
}

func TestProcessorConcurrentDuplicates(t *testing.T) {
	store := orderstest.NewMemStore()
	p := &Processor{Store: store}
	var wg sync.WaitGroup
	results := make([]Result, 32)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = p.Process(context.Background(), Message{Body: []byte(exampleBody), DeliveryCount: 1})
		}()
	}
	wg.Wait()
	count := map[Outcome]int{}
	for _, r := range results {
		count[r.Outcome]++
	}
	if count[Created] != 1 || count[Duplicate] != 31 {
		t.Fatalf("outcomes = %v, want 1 created and 31 duplicates", count)
	}
}

// conflictFails is a MemStore whose conflict records cannot be written.
type conflictFails struct {
	*orderstest.MemStore
	err error
}

func (c conflictFails) RecordConflict(context.Context, Conflict) error { return c.err }

func TestMismatchWhoseRecordCannotBeWritten(t *testing.T) {
	throttled := &StoreError{Op: "record conflict", OrderID: "ORD-2026-000123", Status: 429, IsTransient: true, Err: errors.New("429 Too Many Requests")}
	store := conflictFails{MemStore: orderstest.NewMemStore(), err: throttled}
	p := &Processor{Store: store}
	ctx := context.Background()
	p.Process(ctx, Message{Body: []byte(exampleBody), DeliveryCount: 1})
	other := strings.Replace(exampleBody, `"CUST-42"`, `"CUST-43"`, 1)

	if r := p.Process(ctx, Message{Body: []byte(other), DeliveryCount: 1}); r.Outcome != Transient {
		t.Errorf("early delivery: %s, want transient so the record is retried", r.Outcome)
	}
	r := p.Process(ctx, Message{Body: []byte(other), DeliveryCount: DefaultRetryBudget})
	if r.Outcome != Mismatch || r.Reason != HashMismatch || !strings.Contains(r.Description, "conflict record was not written") {
		t.Errorf("last delivery: %s/%s %q, want the mismatch parked as HashMismatch", r.Outcome, r.Reason, r.Description)
	}
}

// fixedStored is a Store whose orders all exist with one stored fingerprint.
type fixedStored struct {
	*orderstest.MemStore
	fp StoredFingerprint
}

func (f fixedStored) CreateOrder(context.Context, *AcceptanceBatch) (*StoredFingerprint, error) {
	return &f.fp, nil
}

func TestStoredFingerprintEdgeCases(t *testing.T) {
	o, err := ParseOrder([]byte(exampleBody))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		fp   StoredFingerprint
		want Outcome
	}{
		{"same hash, hashVersion missing", StoredFingerprint{Hash: o.Hash}, Duplicate},
		{"no requestHash: written by someone else", StoredFingerprint{}, Mismatch},
		{"unknown rule version", StoredFingerprint{Hash: o.Hash, Version: 7}, Mismatch},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := &Processor{Store: fixedStored{MemStore: orderstest.NewMemStore(), fp: tc.fp}}
			r := p.Process(context.Background(), Message{Body: []byte(exampleBody), DeliveryCount: 1})
			if r.Outcome != tc.want {
				t.Errorf("outcome %s (%s), want %s", r.Outcome, r.Description, tc.want)
			}
			if tc.want == Mismatch && r.Reason != HashMismatch {
				t.Errorf("reason %s, want HashMismatch", r.Reason)
			}
		})
	}
}

// The event checked against the topic's budget is built once per delivery
// and is the event written; the check holds for a duplicate too, which is
// refused rather than completed when its event would not fit
// (docs/contract.md §3, event size; docs/adr/0009-output-size-budgets.md).
func TestProcessorChecksTheEventItWrites(t *testing.T) {
	ctx := context.Background()
	store := orderstest.NewMemStore()
	var checked []json.RawMessage
	limit := 1 << 20
	// A fixed clock: acceptedAt is part of the event, and RFC 3339 drops
	// trailing zeros, so the event's length would vary with the time.
	at := time.Date(2026, 11, 29, 10, 0, 2, 123456789, time.UTC)
	p := &Processor{Store: store, Now: func() time.Time { return at }, EventBudget: func(e json.RawMessage) error {
		checked = append(checked, e)
		if len(e) > limit {
			return fmt.Errorf("%d bytes, over %d", len(e), limit)
		}
		return nil
	}}
	msg := Message{Body: []byte(exampleBody), MessageID: "ORD-2026-000123", DeliveryCount: 1}

	if r := p.Process(ctx, msg); r.Outcome != Created || len(checked) != 1 {
		t.Fatalf("new order: %s (%s), %d checks; want created after one check", r.Outcome, r.Description, len(checked))
	}
	events, _ := store.Documents(ctx, TypeOutboxEvent)
	if len(events) != 1 {
		t.Fatalf("%d outbox events stored, want 1", len(events))
	}
	e, err := PublishableEvent(events[0])
	if err != nil {
		t.Fatal(err)
	}
	if sent, _ := json.Marshal(e); string(sent) != string(checked[0]) {
		t.Errorf("checked\n%s\nbut the publisher sends\n%s", checked[0], sent)
	}

	if r := p.Process(ctx, msg); r.Outcome != Duplicate || len(checked) != 2 {
		t.Errorf("redelivery: %s, %d checks; want a duplicate after one more check", r.Outcome, len(checked))
	}
	limit = len(checked[0]) - 1
	r := p.Process(ctx, msg)
	if r.Outcome != Invalid || r.Reason != ValidationFailed || !strings.Contains(r.Description, "OrderAccepted event would be") {
		t.Errorf("redelivery whose event no longer fits: %s/%s %q; want ValidationFailed", r.Outcome, r.Reason, r.Description)
	}
	if store.Orders() != 1 || len(checked) != 3 {
		t.Errorf("%d orders, %d checks after the refused redelivery; want 1 and 3", store.Orders(), len(checked))
	}
}
