package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/ordersink/orders-consumer/orders"
	"github.com/ordersink/orders-consumer/orders/orderstest"
)

// order show against the Cosmos emulator: an order accepted by the store the
// handler uses, a conflict recorded beside it, and the parked mismatch in the
// local files (fixture ORD-1).
func TestOrderShow(t *testing.T) {
	env := cosmosDB.Env(t)
	body := []byte(`{"orderId":"ORD-1","customerId":"CUST-42","currency":"EUR","lines":[{"sku":"SKU-1","quantity":1,"unitPrice":"5.00"}],"total":"5.00","placedAt":"2026-11-29T10:00:00Z"}`)
	o, err := orders.ParseOrder(body)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := env.Store.CreateOrder(ctx, orderstest.Batch(t, o, orders.Acceptance{MessageID: orders.MessageID(o.ID, body), AcceptedAt: time.Now()})); err != nil {
		t.Fatal(err)
	}
	if err := env.Store.RecordConflict(ctx, orders.Conflict{OrderID: o.ID, MessageID: "m2", StoredHash: o.Hash,
		IncomingHash: "sha256:bb", Body: "{}", DetectedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{"COSMOS_ENDPOINT": env.Endpoint, "COSMOS_KEY": env.Key, "COSMOS_DATABASE": env.Database, "COSMOS_CONTAINER": env.Container}

	code, out, errs := ctlEnv(t, vars, "order", "show", "--local", fixtures, "--output", "json", "ORD-1")
	var got struct {
		Documents []struct{ Type, ID, RequestHash string }
		Parked    []Parked
	}
	defer func() {
		// The parked mismatch's body is {"orderId":"ORD-1"}: every other
		// member of the stored order is missing from it.
		if len(got.Parked) != 1 || got.Parked[0].Diff == nil || len(got.Parked[0].Diff.Changes) != 5 ||
			got.Parked[0].Diff.Changes[1] != (orders.Change{Path: "/customerId", Stored: `"CUST-42"`}) {
			t.Errorf("diff of the parked mismatch: %+v", got.Parked)
		}
	}()
	if code != exitOK || json.Unmarshal([]byte(out), &got) != nil {
		t.Fatalf("exit %d, stderr %s, output %s", code, errs, out)
	}
	types := map[string]int{}
	for _, d := range got.Documents {
		types[d.Type]++
		if d.Type == orders.TypeOrder && d.RequestHash != o.Hash {
			t.Errorf("order document hash %q, want %q", d.RequestHash, o.Hash)
		}
	}
	if types[orders.TypeOrder] != 1 || types[orders.TypeOutboxEvent] != 1 || len(got.Documents) != 3 ||
		len(got.Parked) != 1 || got.Parked[0].Reason != "HashMismatch" {
		t.Errorf("documents by type %v (%d), parked %+v; want the order, its outbox event, a conflict and the parked mismatch",
			types, len(got.Documents), got.Parked)
	}

	code, out, _ = ctlEnv(t, vars, "order", "show", "--local", fixtures, "ORD-1")
	if code != exitOK || !strings.Contains(out, o.Hash) || !strings.Contains(out, "parked (parking #1)") || !strings.Contains(out, `/total: "5.00" → (absent)`) {
		t.Errorf("table: exit %d\n%s", code, out)
	}
	if code, _, _ := ctlEnv(t, vars, "order", "show", "--local", t.TempDir(), "ORD-NONE"); code != exitNotFound {
		t.Errorf("unknown order: exit %d, want %d", code, exitNotFound)
	}
	if code, _, _ := ctl(t, "order", "show", "ORD-1"); code != exitUsage {
		t.Errorf("without COSMOS_ENDPOINT: exit %d, want %d", code, exitUsage)
	}
}
