package cosmos_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ordersink/orders-consumer/internal/cosmostest"
	"github.com/ordersink/orders-consumer/orders"
)

// The integration tests of this package share one Cosmos endpoint, started on
// first use so that the unit tests need none.
var cosmosDB = cosmostest.NewShared("cosmos")

func testEnv(t *testing.T) *cosmostest.Env { return cosmosDB.Env(t) }

func TestMain(m *testing.M) { os.Exit(cosmosDB.Main(m)) }

func newOrder(t *testing.T) *orders.Order {
	t.Helper()
	id := fmt.Sprintf("ORD-%s-%d", strings.ReplaceAll(t.Name(), "/", "-"), time.Now().UnixNano())
	o, err := orders.ParseOrder(fmt.Appendf(nil, `{"orderId":%q,"customerId":"CUST-42","currency":"EUR","lines":[{"sku":"SKU-1","quantity":2,"unitPrice":"19.99"}],"total":"39.98","placedAt":"2026-11-29T10:00:00Z"}`, id))
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// seedOneOf stores only document i of a new order's acceptance batch (0 the
// order, 1 its outbox event) and returns the order to accept.
func seedOneOf(t *testing.T, e *cosmostest.Env, i int) (*orders.Order, orders.Acceptance) {
	t.Helper()
	o := newOrder(t)
	a := orders.Acceptance{MessageID: o.ID, AcceptedAt: time.Now()}
	docs, err := o.AcceptanceDocuments(a)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Store.CreateDocument(context.Background(), o.ID, docs[i].Body); err != nil {
		t.Fatal(err)
	}
	return o, a
}

func typesIn(t *testing.T, e *cosmostest.Env, orderID string) []string {
	t.Helper()
	docs, err := e.Store.PartitionDocuments(context.Background(), orderID)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]string, 0, len(docs))
	for _, d := range docs {
		var v struct {
			Type string `json:"type"`
		}
		_ = json.Unmarshal(d, &v)
		out = append(out, v.Type)
	}
	return out
}

// An order accepted before the outbox existed has no event. Its redelivery
// must fail on the marker and write nothing: no late event.
func TestMarkerConflictLeavesNoOutboxEvent(t *testing.T) {
	e := testEnv(t)
	o, a := seedOneOf(t, e, 0)
	fp, err := e.Store.CreateOrder(context.Background(), o, a)
	if err != nil || fp == nil || fp.Hash != o.Hash {
		t.Fatalf("fingerprint %+v, err %v: want the stored one", fp, err)
	}
	if got := typesIn(t, e, o.ID); len(got) != 1 || got[0] != orders.TypeOrder {
		t.Errorf("partition holds %v, want only the order", got)
	}
}

// An outbox event without its order cannot be produced by the consumer; if
// it exists, creating the order fails on the event on every delivery, so the
// error is final, and the batch must leave no order behind. Only a real
// account (or Microsoft's emulator) rolls the order back.
func TestLaterOperationFailingRollsBackTheOrder(t *testing.T) {
	e := testEnv(t)
	o, a := seedOneOf(t, e, 1)
	fp, err := e.Store.CreateOrder(context.Background(), o, a)
	var se *orders.StoreError
	if fp != nil || !errors.As(err, &se) || se.Transient || !strings.Contains(err.Error(), "operation 1") {
		t.Fatalf("fingerprint %+v, err %v: want a final error naming operation 1", fp, err)
	}
	if e.LocalEmulator {
		t.Skip("the local emulator does not roll back a transactional batch (it kept operation 0); run against a real account or Microsoft's emulator (COSMOS_ENDPOINT) to check the rollback")
	}
	if got := typesIn(t, e, o.ID); len(got) != 1 || got[0] != orders.TypeOutboxEvent {
		t.Errorf("partition holds %v, want only the pre-existing event: the order was not rolled back", got)
	}
}

func TestStatusWritesAreConditional(t *testing.T) {
	e := testEnv(t)
	ctx := context.Background()
	o := newOrder(t)
	at := time.Now()
	apply := func(v int64, status string) orders.StatusApplied {
		t.Helper()
		r, err := e.Store.ApplyStatus(ctx, orders.StatusChange{OrderID: o.ID, Status: status, Version: v, ChangedAt: at}, "m", at)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	steps := []struct {
		version     int64
		status      string
		applied     bool
		prevVersion int64 // 0: none
	}{
		{3, "Paid", true, 0},
		{3, "Paid", false, 3},
		{2, "Placed", false, 3},
		{4, "Shipped", true, 3},
	}
	for _, st := range steps {
		r := apply(st.version, st.status)
		prev := int64(0)
		if r.Previous != nil {
			prev = r.Previous.Version
		}
		if r.Applied != st.applied || prev != st.prevVersion || r.Attempts != 1 {
			t.Errorf("v%d %s: %+v, want applied %v over v%d in one attempt", st.version, st.status, r, st.applied, st.prevVersion)
		}
	}
}
