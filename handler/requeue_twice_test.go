package handler

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/ordersink/orders-consumer/orders"
)

// TestMessageGivenBackTwiceKeepsEveryDelivery: docs/contract.md §7. A
// message a batch gives back carries its deliveries so far; given back
// again, it carries those of both lives, so the retry budget never
// restarts. An order that keeps failing is retried at its eighth delivery in
// all and parked RetryBudgetExhausted at its ninth, as if it had never left
// the queue. Each batch is settled by a batch-mate on its last delivery.
func TestMessageGivenBackTwiceKeepsEveryDelivery(t *testing.T) {
	var id string
	var body []byte
	var mates [2]string
	var mateBodies [2][]byte
	t.Run("ids", func(t *testing.T) {
		id, body = uniqueOrder(t)
		for i := range mates {
			mates[i], mateBodies[i] = uniqueOrder(t)
			mateBodies[i] = []byte(strings.Replace(string(mateBodies[i]), `"currency":"EUR"`, `"currency":"euro"`, 1))
		}
	})
	store := flakyStore{readableStore: testStore(t), failing: map[string]bool{id: true}}
	s := startBatchServer(t, store, 2)
	givenBack := func(step string, a answer, deliveries int) []byte {
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
			t.Fatalf("%s: given back %v; want %s with %d deliveries and its body", step, got, id, deliveries)
		}
		return []byte(hostOutputText(t, map[string]Requeued{requeueKey: q[0]}))
	}
	// First life: deliveries 1 to 3 in the queue.
	first := givenBack("first give-back", s.invokeFunction(t, FunctionProcessOrderBatch, hostBatch([]batchMessage{
		{mateBodies[0], mates[0], orders.DefaultRetryBudget, ""}, {body, id, 3, ""}})), 3)
	// Second life, a new message: deliveries 1 and 2 of it, 4 and 5 in all.
	second := givenBack("second give-back", s.invokeFunction(t, FunctionProcessOrderBatch, hostBatch([]batchMessage{
		{mateBodies[1], mates[1], orders.DefaultRetryBudget, ""}, {first, "sb-1", 2, ""}})), 5)
	// Third life: delivery 3 of it is the eighth in all, still under the
	// budget; delivery 4 is the ninth.
	if a := s.invoke(t, hostInvocation(second, "sb-2", 3)); a.Status != http.StatusServiceUnavailable || a.parked(t) != nil {
		t.Fatalf("delivery 8 in all: status %d, parked %s; want 503, retried", a.Status, describe(a.parked(t)))
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
}

// deliveryCountOf is an envelope's deliveryCount, or nil without one.
func deliveryCountOf(e *ParkingEnvelope) any {
	if e == nil {
		return nil
	}
	return e.DeliveryCount
}
