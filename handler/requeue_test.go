package handler

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/ordersink/orders-consumer/handler/handlertest"
	"github.com/ordersink/orders-consumer/orders"
	"github.com/ordersink/orders-consumer/orders/orderstest"
)

// A requeued message is read as the message it carries, with its
// deliveries counted, by both functions; anything else is left alone.
func TestUnwrapRequeued(t *testing.T) {
	binary := []byte{0xff, 0xfe, '{'}
	tests := []struct {
		name      string
		q         Requeued
		wantBody  string
		wantCount int
	}{
		{"order", Requeued{Body: orderstest.ExampleBody, MessageID: "ORD-2026-000123", Deliveries: 4}, orderstest.ExampleBody, 4 + 2},
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
	for _, body := range []string{orderstest.ExampleBody, `{"orderConsumerRequeued":"x"}`, `{"orderConsumerRequeued":{},"orderId":"B"}`, `["orderConsumerRequeued"]`} {
		d := delivery{body: []byte(body), messageID: "m", deliveryCount: 3}
		d.unwrapRequeued()
		if string(d.body) != body || d.deliveryCount != 3 || d.messageID != "m" {
			t.Errorf("%s was taken for a requeued message: %+v", body, d)
		}
	}
}

// A young batch-mate too large to be requeued in one Service Bus message
// is parked, with the reason, rather than lost in a failed output send.
func TestBatchMateTooLargeToRequeueIsParked(t *testing.T) {
	var old, big string
	var oldb, bigb []byte
	t.Run("ids", func(t *testing.T) {
		old, oldb = handlertest.UniqueOrder(t)
		big, bigb = handlertest.UniqueOrder(t)
		// Quotes are escaped once in the body and twice when requeued;
		// DefaultMaxMessageBytes/3 of them in strings within the string length
		// limit of docs/contract.md §3.
		note := `"` + strings.Repeat(`\"`, orders.MaxTokenBytes/2) + `"`
		notes := "[" + strings.TrimSuffix(strings.Repeat(note+",", DefaultMaxMessageBytes/3/(orders.MaxTokenBytes/2)+1), ",") + "]"
		bigb = []byte(strings.Replace(string(bigb), `"currency"`, `"notes":`+notes+`,"currency"`, 1))
	})
	store := flakyStore{Store: testStore(t), failing: map[string]bool{old: true, big: true}}
	s := startBatchServer(t, store, 2)
	a := s.invokeFunction(t, FunctionProcessOrderBatch, hostBatch([]batchMessage{{oldb, old, orders.DefaultRetryBudget, ""}, {bigb, big, 1, ""}}))
	if a.Status != http.StatusOK {
		t.Fatalf("status %d", a.Status)
	}
	if q := a.requeuedAll(t); len(q) != 0 {
		t.Errorf("requeued %d messages over the budget", len(q))
	}
	es := a.parkedAll(t)
	if len(es) != 2 || es[1].OrderID != big || es[1].Reason != orders.RetryBudgetExhausted || !strings.Contains(es[1].Description, "cannot be requeued") {
		t.Errorf("parked %+v", es)
	}
}

// TestMessageRequeuedTwiceKeepsEveryDelivery: docs/contract.md §7. A
// message a batch requeues carries its deliveries so far; requeued
// again, it carries those of both lives, so the retry budget never
// restarts. An order that keeps failing is retried at its eighth delivery in
// all and parked RetryBudgetExhausted at its ninth, as if it had never left
// the queue. Each batch is settled by a batch-mate on its last delivery.
func TestMessageRequeuedTwiceKeepsEveryDelivery(t *testing.T) {
	var id string
	var body []byte
	var mates [2]string
	var mateBodies [2][]byte
	t.Run("ids", func(t *testing.T) {
		id, body = handlertest.UniqueOrder(t)
		for i := range mates {
			mates[i], mateBodies[i] = handlertest.UniqueOrder(t)
			mateBodies[i] = []byte(strings.Replace(string(mateBodies[i]), `"currency":"EUR"`, `"currency":"euro"`, 1))
		}
	})
	store := flakyStore{Store: testStore(t), failing: map[string]bool{id: true}}
	s := startBatchServer(t, store, 2)
	requeuedAs := func(step string, a answer, deliveries int) []byte {
		t.Helper()
		if a.Status != http.StatusOK {
			t.Fatalf("%s: status %d, want the batch settled", step, a.Status)
		}
		q := a.requeuedAll(t)
		if len(q) != 1 || q[0].MessageID != id || q[0].Body != string(body) || q[0].Deliveries != deliveries {
			var got []string
			for _, m := range q {
				got = append(got, fmt.Sprintf("%s with %d deliveries (body %d bytes)", m.MessageID, m.Deliveries, len(m.Body)))
			}
			t.Fatalf("%s: requeued %v; want %s with %d deliveries and its body", step, got, id, deliveries)
		}
		return []byte(hostOutputText(t, map[string]Requeued{requeueKey: q[0]}))
	}
	// First life: deliveries 1 to 3 in the queue.
	first := requeuedAs("first requeue", s.invokeFunction(t, FunctionProcessOrderBatch, hostBatch([]batchMessage{
		{mateBodies[0], mates[0], orders.DefaultRetryBudget, ""}, {body, id, 3, ""}})), 3)
	// Second life, a new message: deliveries 1 and 2 of it, 4 and 5 in all.
	second := requeuedAs("second requeue", s.invokeFunction(t, FunctionProcessOrderBatch, hostBatch([]batchMessage{
		{mateBodies[1], mates[1], orders.DefaultRetryBudget, ""}, {first, "sb-1", 2, ""}})), 5)
	// Third life: delivery 3 of it is the eighth in all, still under the
	// budget; delivery 4 is the ninth.
	third := s.invoke(t, hostInvocation(second, "sb-2", 3))
	if third.Status != http.StatusServiceUnavailable || third.parked(t) != nil {
		t.Fatalf("delivery 8 in all: status %d, parked %s; want 503, retried", third.Status, describe(third.parked(t)))
	}
	// Its log line counts the earlier lives and names the store's refusal.
	if line := s.logsOf(third); !strings.Contains(line, `"priorDeliveries":5`) || !strings.Contains(line, `"status":503,"subStatus":0`) {
		t.Errorf("delivery 8's log line lacks priorDeliveries 5 or the store's status: %s", line)
	}
	if line := s.logsOf(s.invoke(t, hostInvocation(body, "sb-0", 1))); strings.Contains(line, "priorDeliveries") {
		t.Errorf("a message never requeued logged priorDeliveries: %s", line)
	}
	a := s.invoke(t, hostInvocation(second, "sb-2", 4))
	e := a.parked(t)
	if a.Status != http.StatusOK || e == nil || e.Reason != orders.RetryBudgetExhausted || e.DeliveryCount != orders.DefaultRetryBudget {
		t.Fatalf("delivery 9 in all: status %d, parked %s at delivery %v; want RetryBudgetExhausted at delivery %d",
			a.Status, describe(e), deliveryCountOf(e), orders.DefaultRetryBudget)
	}
	if e.MessageID != id || e.Body != string(body) {
		t.Errorf("parked as message %s with body %.60q; want the original message", e.MessageID, e.Body)
	}
	// and the time the original was enqueued, not the last requeue's.
	var orig map[string]Requeued
	if err := json.Unmarshal(first, &orig); err != nil || orig[requeueKey].EnqueuedAt == "" {
		t.Fatalf("the first requeue %s has no enqueuedTimeUtc (%v)", first, err)
	}
	if e.EnqueuedAt != orig[requeueKey].EnqueuedAt {
		t.Errorf("parked with enqueuedTimeUtc %q, want the original's %q", e.EnqueuedAt, orig[requeueKey].EnqueuedAt)
	}
}

// deliveryCountOf is an envelope's deliveryCount, or nil without one.
func deliveryCountOf(e *ParkingEnvelope) any {
	if e == nil {
		return nil
	}
	return e.DeliveryCount
}

// requeuedAll decodes Outputs.requeue of a batch answer.
func (a answer) requeuedAll(t *testing.T) []Requeued {
	t.Helper()
	raw, ok := a.Outputs[RequeueBinding]
	if !ok {
		return nil
	}
	var items []map[string]Requeued
	if err := json.Unmarshal(raw, &items); err != nil {
		t.Fatalf("requeue output is not an array of objects: %s", raw)
	}
	out := make([]Requeued, len(items))
	for i, it := range items {
		out[i] = it[requeueKey]
	}
	return out
}

// hostOutputText is the message text the host sends for an output object:
// Newtonsoft's indented JSON (docs/host-wire-format.md §2.4).
func hostOutputText(t *testing.T, v any) string {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
