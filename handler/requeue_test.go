package handler

import (
	"encoding/base64"
	"net/http"
	"strings"
	"testing"

	"github.com/ordersink/orders-consumer/orders"
)

// A requeued message is read as the message it gives back, with its
// deliveries counted, by both functions; anything else is left alone.
func TestUnwrapRequeued(t *testing.T) {
	binary := []byte{0xff, 0xfe, '{'}
	tests := []struct {
		name      string
		q         Requeued
		wantBody  string
		wantCount int
	}{
		{"order", Requeued{Body: exampleBody, MessageID: "ORD-2026-000123", Deliveries: 4}, exampleBody, 4 + 2},
		{"status change keeps its subject", Requeued{Body: `{"orderId":"A"}`, MessageID: "A", Subject: "OrderStatusChanged", Deliveries: 1}, `{"orderId":"A"}`, 1 + 2},
		{"bytes that are not UTF-8", Requeued{Body: base64.StdEncoding.EncodeToString(binary), BodyEncoding: "base64", Deliveries: 2}, string(binary), 2 + 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := delivery{body: []byte(hostOutputText(t, map[string]Requeued{requeueKey: tc.q})), messageID: "sb-1", deliveryCount: 2}
			d.unwrapRequeued()
			if string(d.body) != tc.wantBody || d.deliveryCount != tc.wantCount || d.messageID != tc.q.MessageID || d.subject != tc.q.Subject {
				t.Errorf("unwrapped to %+v", d)
			}
		})
	}
	for _, body := range []string{exampleBody, `{"orderConsumerRequeued":"x"}`, `{"orderConsumerRequeued":{},"orderId":"B"}`, `["orderConsumerRequeued"]`} {
		d := delivery{body: []byte(body), messageID: "m", deliveryCount: 3}
		d.unwrapRequeued()
		if string(d.body) != body || d.deliveryCount != 3 || d.messageID != "m" {
			t.Errorf("%s was taken for a requeued message: %+v", body, d)
		}
	}
}

// A young batch-mate too large to be given back in one Service Bus message
// is parked, with the reason, rather than lost in a failed output send.
func TestBatchMateTooLargeToGiveBackIsParked(t *testing.T) {
	var old, big string
	var oldb, bigb []byte
	t.Run("ids", func(t *testing.T) {
		old, oldb = uniqueOrder(t)
		big, bigb = uniqueOrder(t)
		// Quotes are escaped once in the body and twice when given back;
		// DefaultMaxMessageBytes/3 of them in strings within the string length
		// limit of docs/contract.md §3.
		note := `"` + strings.Repeat(`\"`, orders.MaxTokenBytes/2) + `"`
		notes := "[" + strings.TrimSuffix(strings.Repeat(note+",", DefaultMaxMessageBytes/3/(orders.MaxTokenBytes/2)+1), ",") + "]"
		bigb = []byte(strings.Replace(string(bigb), `"currency"`, `"notes":`+notes+`,"currency"`, 1))
	})
	store := flakyStore{readableStore: testStore(t), failing: map[string]bool{old: true, big: true}}
	s := startBatchServer(t, store, 2)
	a := s.invokeFunction(t, FunctionProcessOrderBatch, hostBatch([]batchMessage{{oldb, old, orders.DefaultRetryBudget, ""}, {bigb, big, 1, ""}}))
	if a.Status != http.StatusOK {
		t.Fatalf("status %d", a.Status)
	}
	if q := a.requeuedAll(t); len(q) != 0 {
		t.Errorf("given back %d messages over the budget", len(q))
	}
	es := a.parkedAll(t)
	if len(es) != 2 || es[1].OrderID != big || es[1].Reason != orders.RetryBudgetExhausted || !strings.Contains(es[1].Description, "cannot be given back") {
		t.Errorf("parked %+v", es)
	}
}
