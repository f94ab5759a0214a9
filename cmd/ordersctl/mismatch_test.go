package main

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

// parked show answers an operator's first question about a HashMismatch,
// what changed, against the order stored in the Cosmos emulator: the
// quantity that differs, and nothing for what the fingerprint does not
// see (member order, number spelling, meta); the same for a body kept in
// Cosmos DB.
func TestParkedShowDiffsAMismatch(t *testing.T) {
	env := cosmosDB.Env(t)
	ctx := context.Background()
	id := fmt.Sprintf("ORD-DIFF-%d", time.Now().UnixNano())
	stored := []byte(`{"orderId":"` + id + `","customerId":"CUST-1","currency":"EUR","lines":[{"sku":"SKU-1","quantity":1,"unitPrice":"5.00"}],"total":"5.00","placedAt":"2026-12-01T09:00:00Z","meta":{"trace":"a"}}`)
	o, err := orders.ParseOrder(stored)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := env.Store.CreateOrder(ctx, orderstest.Batch(t, o, orders.Acceptance{MessageID: orders.MessageID(o.ID, stored), AcceptedAt: time.Now()})); err != nil {
		t.Fatal(err)
	}
	resend := `{"meta":{"trace":"b"},"total":"5.00","placedAt":"2026-12-01T09:00:00Z","currency":"EUR","customerId":"CUST-1","orderId":"` + id + `","lines":[{"unitPrice":"5.00","quantity":3.0,"sku":"SKU-1"}]}`
	kept := orders.NewParkedBody([]byte(resend), id, id+":2", orders.HashMismatch, time.Now())
	if err := env.Store.ParkBody(ctx, kept); err != nil {
		t.Fatal(err)
	}
	q := newFakeQueue(envelopeMessage(t, map[string]any{"reason": "HashMismatch", "orderId": id, "messageId": id + ":2", "body": resend}),
		bodyEnvelope(t, "HashMismatch", kept))
	vars := withCosmos(withAzure(t, q, newFakeQueue(), nil), env)

	code, out, errs := ctlEnv(t, vars, "parked", "show", id)
	if code != exitOK || strings.Count(out, "/lines/0/quantity: 1 → 3\n") != 2 || strings.Count(out, "  /") != 2 || errs != "" {
		t.Errorf("exit %d, stderr %q\n%s", code, errs, out)
	}
	code, out, _ = ctlEnv(t, vars, "parked", "show", "--output", "json", id)
	var got []Parked
	if code != exitOK || json.Unmarshal([]byte(out), &got) != nil || len(got) != 2 || got[1].Diff == nil ||
		len(got[1].Diff.Changes) != 1 || got[1].Diff.Changes[0] != (orders.Change{Path: "/lines/0/quantity", Stored: "1", Incoming: "3"}) {
		t.Errorf("json: exit %d\n%s", code, out)
	}

	// Without Cosmos DB the message is still shown; the comparison is not.
	delete(vars, "COSMOS_ENDPOINT")
	code, out, errs = ctlEnv(t, vars, "parked", "show", id)
	if code != exitOK || !strings.Contains(out, "HashMismatch") || !strings.Contains(errs, "not compared with the stored order") {
		t.Errorf("without Cosmos DB: exit %d, stderr %q\n%s", code, errs, out)
	}
}
