package handler

import (
	"net/http"
	"strings"
	"testing"

	"github.com/ordersink/orders-consumer/cosmos/cosmostest"
	"github.com/ordersink/orders-consumer/handler/handlertest"
	"github.com/ordersink/orders-consumer/orders"
)

// A batch against a Cosmos DB that never answers is answered at its
// deadline: 503 when all its messages are young; completed when one is on its
// last delivery, that one parked and the young ones requeued, and what is
// requeued creates the order, unchanged, once Cosmos DB answers.
func TestBatchAgainstACosmosThatNeverAnswers(t *testing.T) {
	b := startOutageBench(t, cosmostest.Silent, true)
	var ids [3]string
	var bodies [3][]byte
	t.Run("ids", func(t *testing.T) {
		for i := range ids {
			ids[i], bodies[i] = handlertest.UniqueOrder(t)
		}
	})
	// The batch's deadline within its lock is timed on virtual time
	// (TestEachFunctionRunsUnderItsOwnDeadline).
	invokeBatch := func(msgs []batchMessage) answer {
		return b.invokeFunction(t, FunctionProcessOrderBatch, hostBatch(msgs))
	}
	young := []batchMessage{{bodies[0], ids[0], 1, ""}, {bodies[1], ids[1], 2, ""}, {bodies[2], ids[2], 1, ""}}
	if a := invokeBatch(young); a.Status != http.StatusServiceUnavailable {
		t.Fatalf("young batch: status %d, want 503", a.Status)
	}

	a := invokeBatch([]batchMessage{{bodies[0], ids[0], orders.DefaultRetryBudget, ""}, young[1], young[2]})
	if a.Status != http.StatusOK {
		t.Fatalf("batch with a last delivery: status %d, want 200", a.Status)
	}
	if got := strings.Join(a.outcomes(), " "); got != "exhausted requeued requeued" {
		t.Errorf("outcomes %q", got)
	}
	if es := a.parkedAll(t); len(es) != 1 || es[0].OrderID != ids[0] || es[0].Reason != orders.RetryBudgetExhausted {
		t.Errorf("parked %+v, want only the message on its last delivery", es)
	}
	requeued := a.requeuedAll(t)
	if len(requeued) != 2 || requeued[0].Body != string(bodies[1]) || requeued[0].Deliveries != 2 || requeued[1].Body != string(bodies[2]) {
		t.Fatalf("requeued %+v", requeued)
	}

	// Requeued, they come in again as new messages, to either function.
	b.proxy.Set(cosmostest.Up)
	text := func(q Requeued) []byte { return []byte(hostOutputText(t, map[string]Requeued{requeueKey: q})) }
	a = b.invokeFunction(t, FunctionProcessOrderBatch, hostBatch([]batchMessage{{text(requeued[0]), "sb-1", 1, ""}}))
	if a.Status != http.StatusOK || strings.Join(a.outcomes(), " ") != "created" || !strings.Contains(a.FirstLog(), "(delivery 3)") {
		t.Fatalf("requeued to the batch function: status %d, %v", a.Status, a.Logs)
	}
	a = b.invoke(t, hostInvocation(text(requeued[1]), "sb-2", 1))
	if a.Status != http.StatusOK || a.Outcome() != "created" || !strings.Contains(a.FirstLog(), "(delivery 2)") {
		t.Fatalf("requeued to ProcessOrder: status %d, %v", a.Status, a.Logs)
	}
	for _, i := range []int{1, 2} {
		docs := handlertest.DocumentsOfType(partition(t, ids[i]), orders.TypeOrder)
		want, _ := orders.ParseOrder(bodies[i])
		if len(docs) != 1 || docs[0]["requestHash"] != want.Hash || docs[0]["messageId"] != ids[i] {
			t.Errorf("order %s stored as %v, want the original body's fingerprint and MessageId", ids[i], docs)
		}
	}
}

// Every message at its last delivery with a final outcome keeps its
// envelope, even beside a transient batch-mate, which is requeued.
func TestBatchLastDeliveryWithFinalOutcomeBesideATransientMate(t *testing.T) {
	var bad, mate, mis string
	var badb, mateb, misb []byte
	t.Run("ids", func(t *testing.T) {
		bad, badb = handlertest.UniqueOrder(t)
		badb = []byte(strings.Replace(string(badb), `"currency":"EUR"`, `"currency":"euro"`, 1))
		mate, mateb = handlertest.UniqueOrder(t)
		mis, misb = handlertest.UniqueOrder(t)
	})
	store := flakyStore{Store: testStore(t), failing: map[string]bool{mate: true}}
	s := startBatchServer(t, store, 2)
	if a := s.invoke(t, hostInvocation(misb, mis, 1)); a.Status != http.StatusOK {
		t.Fatal(a.Status)
	}
	misb2 := []byte(strings.Replace(string(misb), `"quantity":2`, `"quantity":3`, 1))
	misb2 = []byte(strings.Replace(string(misb2), `"total":"44.98"`, `"total":"64.97"`, 1))
	for _, tc := range []struct {
		name   string
		last   batchMessage
		reason orders.Reason
	}{
		{"invalid", batchMessage{badb, bad, orders.DefaultRetryBudget, ""}, orders.ValidationFailed},
		{"mismatch", batchMessage{misb2, mis, 10, ""}, orders.HashMismatch},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := s.invokeFunction(t, FunctionProcessOrderBatch, hostBatch([]batchMessage{tc.last, {mateb, mate, 3, ""}}))
			if a.Status != http.StatusOK {
				t.Fatalf("status %d: the %s message would be dead-lettered without its envelope", a.Status, tc.name)
			}
			es := a.parkedAll(t)
			if len(es) != 1 || es[0].Reason != tc.reason || es[0].OrderID != tc.last.messageID {
				t.Errorf("parked %+v, want the %s message alone", es, tc.name)
			}
			q := a.requeuedAll(t)
			if len(q) != 1 || q[0].MessageID != mate || q[0].Deliveries != 3 || q[0].Body != string(mateb) {
				t.Errorf("requeued %+v, want the transient batch-mate", q)
			}
		})
	}
}
