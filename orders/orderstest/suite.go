package orderstest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ordersink/orders-consumer/orders"
)

// Backend is a store under test: the two interfaces the consumer uses, and
// what a test needs to set up a state and read it back.
type Backend interface {
	orders.Store
	orders.StatusStore
	// CreateDocument writes a document as is into orderID's partition.
	CreateDocument(ctx context.Context, orderID string, doc []byte) error
	// PartitionDocuments returns every document in orderID's partition.
	PartitionDocuments(ctx context.Context, orderID string) ([]json.RawMessage, error)
}

// Features says what a backend cannot do, so the suite skips what it cannot
// show instead of failing on it.
type Features struct {
	// AtomicBatches: a failed operation of CreateOrder's batch undoes the
	// others. The local Cosmos emulator applies them one by one.
	AtomicBatches bool
}

// TestStore runs the suite every [orders.Store] must pass, against the store
// newStore returns (it may share one store between tests: every test uses
// its own orderIds). It is the pattern of watermill's universal pub/sub
// tests: one suite, every backend, switched by [Features].
// Pattern: One contract suite, every store (docs/design-patterns.md#one-contract-suite-every-store).
func TestStore(t *testing.T, f Features, newStore func(t *testing.T) Backend) {
	tests := []struct {
		name string
		run  func(t *testing.T, s Backend, f Features)
	}{
		{"CreateWritesOrderAndOutboxEvent", testCreate},
		{"CreateWritesTheDocumentsAsGiven", testCreateAsGiven},
		{"RedeliveryReturnsStoredFingerprint", testRedelivery},
		{"OtherContentReturnsFirstFingerprint", testOtherContent},
		{"ConcurrentCreatesClaimOnce", testConcurrentCreates},
		{"OrderWithoutEventIsNotCompleted", testMarkerWithoutEvent},
		{"ForeignAcceptanceMembersDoNotFailTheRead", testForeignAcceptance},
		{"EventWithoutOrderIsFinal", testEventWithoutOrder},
		{"TooLargeIsFinal", testTooLarge},
		{"EndedContextIsTransient", testEndedContext},
		{"ConflictRecordedOnce", testConflict},
		{"StatusAppliesOnlyNewerVersions", testStatusVersions},
		{"ConcurrentStatusesEndAtHighest", testConcurrentStatuses},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, newStore(t), f) })
	}
}

var orderSeq atomic.Int64

// newOrder parses an order with an orderId no other test uses; extra is
// added to its members.
func newOrder(t *testing.T, extra string) *orders.Order {
	t.Helper()
	id := fmt.Sprintf("ORD-%s-%d-%d", strings.ReplaceAll(t.Name(), "/", "-"), time.Now().UnixNano(), orderSeq.Add(1))
	return orderWithID(t, id, extra)
}

func orderWithID(t *testing.T, id, extra string) *orders.Order {
	t.Helper()
	body := fmt.Sprintf(`{"orderId":%q,"customerId":"CUST-42","currency":"EUR",`+
		`"lines":[{"sku":"SKU-1","quantity":2,"unitPrice":"19.99"}],"total":"39.98","placedAt":"2026-11-29T10:00:00Z"%s}`, id, extra)
	o, err := orders.ParseOrder([]byte(body))
	if err != nil {
		t.Fatalf("parse order %s: %v", id, err)
	}
	return o
}

func accept(t *testing.T, o *orders.Order) *orders.AcceptanceBatch {
	return Batch(t, o, orders.Acceptance{MessageID: o.ID, AcceptedAt: time.Date(2026, 11, 29, 10, 0, 2, 0, time.UTC)})
}

// Batch builds what accepting o under a writes, as the processor does, for
// tests that call [orders.Store.CreateOrder] themselves: the order
// (Documents[0]) and its event (Documents[1]), or the test fails.
func Batch(t testing.TB, o *orders.Order, a orders.Acceptance) *orders.AcceptanceBatch {
	t.Helper()
	b, err := o.AcceptanceDocuments(a)
	if err != nil {
		t.Fatalf("acceptance documents of %s: %v", o.ID, err)
	}
	if len(b.Documents) != 2 {
		t.Fatalf("acceptance documents of %s: %d documents, want the order and its event", o.ID, len(b.Documents))
	}
	return b
}

// documents maps each document of the partition by id to its type.
func documents(t *testing.T, s Backend, orderID string) map[string]string {
	t.Helper()
	docs, err := s.PartitionDocuments(context.Background(), orderID)
	if err != nil {
		t.Fatalf("read partition %s: %v", orderID, err)
	}
	out := map[string]string{}
	for _, d := range docs {
		var v struct{ ID, Type string }
		if err := json.Unmarshal(d, &v); err != nil {
			t.Fatalf("stored document is not JSON: %s", d)
		}
		out[v.ID] = v.Type
	}
	return out
}

func wantDocuments(t *testing.T, s Backend, orderID string, want map[string]string) {
	t.Helper()
	got := documents(t, s, orderID)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("partition %s holds %v, want %v", orderID, got, want)
	}
}

func accepted(o *orders.Order) map[string]string {
	return map[string]string{o.ID: orders.TypeOrder, orders.EventID(o.ID, orders.EventOrderAccepted): orders.TypeOutboxEvent}
}

// wantStoreError checks that err is a StoreError naming the order, final or
// transient as wanted.
func wantStoreError(t *testing.T, err error, orderID string, transient bool) {
	t.Helper()
	var se *orders.StoreError
	if !errors.As(err, &se) {
		t.Fatalf("error %v (%T), want an *orders.StoreError", err, err)
	}
	if se.OrderID != orderID || se.Transient() != transient || !strings.Contains(err.Error(), orderID) {
		t.Errorf("error %q: OrderID %q, Transient %v; want %q, %v", err, se.OrderID, se.Transient(), orderID, transient)
	}
}
