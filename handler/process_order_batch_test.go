package handler

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ordersink/orders-consumer/handler/handlertest"
	"github.com/ordersink/orders-consumer/orders"
	"github.com/ordersink/orders-consumer/orders/orderstest"
)

// parkedAll decodes Outputs.parking of a batch answer: an array of envelopes.
func (a answer) parkedAll(t *testing.T) []ParkingEnvelope {
	t.Helper()
	raw, ok := a.Outputs[ParkingBinding]
	if !ok {
		return nil
	}
	var es []ParkingEnvelope
	if err := json.Unmarshal(raw, &es); err != nil {
		t.Fatalf("batch parking output is not an array of envelope objects: %s", raw)
	}
	return es
}

// outcomes reads the outcome word of every per-message log line (the last
// line is the batch summary).
func (a answer) outcomes() []string {
	var out []string
	for _, l := range a.Logs {
		if strings.HasPrefix(l, FunctionProcessOrderBatch+": ") && !strings.Contains(l, " messages: ") {
			out = append(out, handlertest.OutcomeOf(l))
		}
	}
	return out
}

func startBatchServer(t *testing.T, store orders.Store, parallelism int) *testServer {
	t.Helper()
	return startServerWith(t, Config{Processor: &orders.Processor{Store: store}, BatchParallelism: parallelism})
}

func TestBatchOfMixedMessagesSettles(t *testing.T) {
	s := startBatchServer(t, testStore(t), 0)
	ids := map[string]string{}
	bodies := map[string][]byte{}
	for _, k := range []string{"new", "dup", "mis", "bad", "stale", "subject", "shadow"} {
		t.Run("id "+k, func(t *testing.T) { ids[k], bodies[k] = handlertest.UniqueOrder(t) })
	}
	for _, k := range []string{"dup", "mis"} {
		if a := s.invoke(t, hostInvocation(bodies[k], ids[k], 1)); a.Status != http.StatusOK {
			t.Fatalf("seed %s: %d", k, a.Status)
		}
	}
	if a := s.invoke(t, statusInvocation(t, ids["stale"], "Shipped", 5, 1)); a.Status != http.StatusOK {
		t.Fatalf("seed status: %d", a.Status)
	}
	floatPrice := []byte(strings.Replace(string(bodies["bad"]), `"unitPrice":"19.99"`, `"unitPrice":19.99`, 1))
	shadow := []byte(strings.Replace(string(bodies["shadow"]), `"currency"`, `"MessageId":"x","currency"`, 1))
	msgs := []batchMessage{
		{bodies["new"], ids["new"], 1, ""},
		{bodies["dup"], ids["dup"], 1, ""},
		{mismatchOf(bodies["mis"]), ids["mis"], 2, ""},
		{floatPrice, ids["bad"], 1, ""},
		{statusBody(ids["new"], "Paid", 1), ids["new"] + ":status:1", 1, "OrderStatusChanged"},
		{statusBody(ids["stale"], "Paid", 4), ids["stale"] + ":status:4", 3, "OrderStatusChanged"},
		{bodies["subject"], ids["subject"], 1, "order.created"},
		{shadow, ids["shadow"], 1, ""},
	}
	// The order under a routing Subject is an order; the body named like
	// metadata is kept, because the host copies nothing for batches.
	parkedIdx := []int{2, 3}
	reasons := []orders.Reason{orders.HashMismatch, orders.ValidationFailed}
	snapshot := func() map[string]map[string]string {
		out := map[string]map[string]string{}
		for k, id := range ids {
			out[k] = docsOf(t, id)
		}
		return out
	}

	rounds := []struct {
		name     string
		outcomes string
	}{
		{"first delivery", "created duplicate mismatch invalid applied stale created created"},
		{"whole batch redelivered", "duplicate duplicate mismatch invalid stale stale duplicate duplicate"},
	}
	var before map[string]map[string]string
	for r, round := range rounds {
		t.Run(round.name, func(t *testing.T) {
			a := s.invokeFunction(t, FunctionProcessOrderBatch, hostBatch(msgs))
			if a.Status != http.StatusOK {
				t.Fatalf("status %d, logs %v", a.Status, a.Logs)
			}
			if got := strings.Join(a.outcomes(), " "); got != round.outcomes {
				t.Errorf("outcomes %q\nwant     %q", got, round.outcomes)
			}
			es := a.parkedAll(t)
			if len(es) != len(parkedIdx) {
				t.Fatalf("parked %d envelopes, want %d: %+v", len(es), len(parkedIdx), es)
			}
			for i, e := range es {
				m := msgs[parkedIdx[i]]
				if e.Reason != reasons[i] || e.MessageID != m.messageID || e.DeliveryCount != m.deliveryCount ||
					e.Body != string(m.body) || e.Function != FunctionProcessOrderBatch || e.EnqueuedAt == "" {
					t.Errorf("envelope %d = %+v", i, e)
				}
			}
			if !strings.Contains(a.Logs[len(a.Logs)-1], "8 messages") {
				t.Errorf("no batch summary: %v", a.Logs)
			}
			after := snapshot()
			if r == 0 {
				if n := len(after["new"]); n != 3 {
					t.Errorf("new order partition has %d documents, want order, event and status", n)
				}
				if n := len(after["mis"]); n != 3 {
					t.Errorf("mismatched order partition has %d documents, want order, event and conflict", n)
				}
				if len(after["bad"]) != 0 {
					t.Errorf("the invalid order wrote %v", after["bad"])
				}
				for _, k := range []string{"subject", "shadow"} {
					if n := len(after[k]); n != 2 {
						t.Errorf("%s partition has %d documents, want order and event", k, n)
					}
				}
			} else if mustJSON(after) != mustJSON(before) {
				t.Errorf("redelivery changed documents:\nbefore %v\nafter  %v", before, after)
			}
			before = after
			for i := range msgs {
				msgs[i].deliveryCount++
			}
		})
	}
}

// flakyStore fails transiently for the orders it names.
type flakyStore struct {
	handlertest.Store
	failing map[string]bool
}

func (f flakyStore) CreateOrder(ctx context.Context, b *orders.AcceptanceBatch) (*orders.StoredFingerprint, error) {
	if f.failing[b.OrderID] {
		return nil, &orders.StoreError{Op: "create order", OrderID: b.OrderID, Status: http.StatusServiceUnavailable, IsTransient: true,
			Err: errors.New("503 Service Unavailable")}
	}
	return f.Store.CreateOrder(ctx, b)
}

func TestBatchWithTransientFailureIsRedeliveredWhole(t *testing.T) {
	var x, y, z string
	var xb, yb, zb []byte
	t.Run("ids", func(t *testing.T) {
		x, xb = handlertest.UniqueOrder(t)
		y, yb = handlertest.UniqueOrder(t)
		z, zb = handlertest.UniqueOrder(t)
	})
	store := flakyStore{Store: testStore(t), failing: map[string]bool{y: true}}
	// Parallelism 1 makes "later messages" well defined.
	s := startBatchServer(t, store, 1)
	steps := []struct {
		name      string
		msgs      []batchMessage
		recovered bool
		status    int
		outcomes  string
		parked    orders.Reason
		unwritten string // an order that must still have no documents
	}{
		{"one message fails: the whole batch is retried", []batchMessage{{xb, x, 1, ""}, {yb, y, 1, ""}}, false,
			http.StatusServiceUnavailable, "created transient", "", y},
		{"after a failure, later messages are not attempted", []batchMessage{{yb, y, 2, ""}, {zb, z, 2, ""}}, false,
			http.StatusServiceUnavailable, "transient transient", "", z},
		{"except on their last attempt, where the failing one is parked", []batchMessage{{yb, y, orders.DefaultRetryBudget, ""}, {zb, z, orders.DefaultRetryBudget, ""}}, false,
			http.StatusOK, "exhausted created", orders.RetryBudgetExhausted, y},
		{"the store recovers: the redelivered batch completes", []batchMessage{{yb, y, 3, ""}, {xb, x, 3, ""}}, true,
			http.StatusOK, "created duplicate", "", ""},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			if st.recovered {
				store.failing[y] = false
			}
			a := s.invokeFunction(t, FunctionProcessOrderBatch, hostBatch(st.msgs))
			if a.Status != st.status {
				t.Fatalf("status %d, want %d", a.Status, st.status)
			}
			if st.unwritten != "" && len(partition(t, st.unwritten)) != 0 {
				t.Errorf("order %s was written", st.unwritten)
			}
			if a.Status/100 != 2 {
				return // the host reads nothing from a failed answer
			}
			if got := strings.Join(a.outcomes(), " "); got != st.outcomes {
				t.Errorf("outcomes %q, want %q", got, st.outcomes)
			}
			es := a.parkedAll(t)
			if st.parked == "" && len(es) != 0 || st.parked != "" && (len(es) != 1 || es[0].Reason != st.parked || es[0].OrderID != y) {
				t.Errorf("parked %+v", es)
			}
		})
	}
	if !strings.Contains(s.Logs.String(), "not attempted") {
		t.Error("the log does not say which messages were not attempted")
	}
	if n := len(partition(t, z)); n != 2 {
		t.Errorf("order %s: %d documents, want 2", z, n)
	}
}

// A message on its last delivery must not lose its parking envelope because
// a younger batch-mate is still transient: the host ignores Outputs on a
// failed invocation, and the broker would dead-letter it without a reason.
func TestBatchWithAMessageOnItsLastDeliveryIsSettled(t *testing.T) {
	var old, young, fine string
	var oldb, youngb, fineb []byte
	t.Run("ids", func(t *testing.T) {
		old, oldb = handlertest.UniqueOrder(t)
		young, youngb = handlertest.UniqueOrder(t)
		fine, fineb = handlertest.UniqueOrder(t)
	})
	store := flakyStore{Store: testStore(t), failing: map[string]bool{old: true, young: true}}
	s := startBatchServer(t, store, 1)
	a := s.invokeFunction(t, FunctionProcessOrderBatch, hostBatch([]batchMessage{
		{oldb, old, orders.DefaultRetryBudget, ""}, {youngb, young, 1, ""}, {fineb, fine, 1, ""}}))
	if a.Status != http.StatusOK {
		t.Fatalf("status %d: the last-delivery message would be dead-lettered without its envelope", a.Status)
	}
	if got := strings.Join(a.outcomes(), " "); got != "exhausted requeued created" {
		t.Errorf("outcomes %q", got)
	}
	byOrder := map[string]*ParkingEnvelope{}
	for _, e := range a.parkedAll(t) {
		byOrder[e.OrderID] = &e
	}
	if e := byOrder[old]; e == nil || e.Reason != orders.RetryBudgetExhausted || e.DeliveryCount != orders.DefaultRetryBudget {
		t.Errorf("last-delivery message: %+v", e)
	}
	if e := byOrder[young]; e != nil {
		t.Errorf("a young batch-mate was parked because of its neighbour: %+v", e)
	}
	if q := a.requeuedAll(t); len(q) != 1 || q[0].MessageID != young || q[0].Body != string(youngb) || !strings.Contains(q[0].Reason, "last delivery") {
		t.Errorf("batch-mate requeued as %+v", q)
	}
}

func TestBatchFixtureThroughTheHandler(t *testing.T) {
	s := startBatchServer(t, testStore(t), 0)
	request, err := os.ReadFile(filepath.Join("testdata", "batch", "host-batch.json"))
	if err != nil {
		t.Fatal(err)
	}
	a := s.invokeFunction(t, FunctionProcessOrderBatch, request)
	if a.Status != http.StatusOK {
		t.Fatalf("status %d", a.Status)
	}
	got := a.outcomes()
	if len(got) != 3 || (got[0] != "created" && got[0] != "duplicate") || (got[1] != "applied" && got[1] != "stale") || got[2] != "invalid" {
		t.Errorf("outcomes %v", got)
	}
	es := a.parkedAll(t)
	if len(es) != 1 || es[0].MessageID != "ORD-2026-000202" || es[0].DeliveryCount != 3 || es[0].EnqueuedAt != "2026-11-29T09:58:12.7891234Z" {
		t.Errorf("parked %+v", es)
	}
}

func TestBatchThatCannotBeDecodedIsRetried(t *testing.T) {
	s := startBatchServer(t, orderstest.NewMemStore(), 0)
	tests := map[string]string{
		"not JSON":                `<xml/>`,
		"no Data":                 `{"Metadata":{}}`,
		"wrong binding name":      `{"Data":{"message":"[]"},"Metadata":{}}`,
		"messages not a list":     `{"Data":{"messages":"{\"orderId\":\"A\"}"},"Metadata":{}}`,
		"messages a bare number":  `{"Data":{"messages":5},"Metadata":{}}`,
		"element not JSON string": `{"Data":{"messages":"[\"unterminated]"},"Metadata":{}}`,
	}
	for name, request := range tests {
		t.Run(name, func(t *testing.T) {
			if a := s.invokeFunction(t, FunctionProcessOrderBatch, []byte(request)); a.Status != http.StatusInternalServerError {
				t.Errorf("status %d, want 500: the broker must keep the messages", a.Status)
			}
		})
	}
	t.Run("empty batch", func(t *testing.T) {
		if a := s.invokeFunction(t, FunctionProcessOrderBatch, hostBatch(nil)); a.Status != http.StatusOK || a.parkedAll(t) != nil {
			t.Errorf("status %d", a.Status)
		}
	})
}

// TestBatchBodyLimits: the batch route applies the same rules per message; a
// body past a limit is parked and its batch-mates are created.
func TestBatchBodyLimits(t *testing.T) {
	s := startBatchServer(t, testEnv(t).Store, 0)
	var ids [3]string
	var bodies [3][]byte
	for i := range ids {
		ids[i], bodies[i] = handlertest.UniqueOrder(t)
	}
	msgs := []batchMessage{
		{bodies[0], ids[0], 1, ""},
		{withMember(bodies[1], `"note":"\ud800\u0041"`), ids[1], 1, ""},
		{withMember(bodies[2], `"x":`+objectOf(orders.MaxMembers+1)), ids[2], 1, ""},
	}
	a := s.invokeFunction(t, FunctionProcessOrderBatch, hostBatch(msgs))
	if got := strings.Join(a.outcomes(), " "); a.Status != http.StatusOK || got != "created invalid invalid" {
		t.Fatalf("status %d, outcomes %q, want created invalid invalid", a.Status, got)
	}
	es := a.parkedAll(t)
	for i, rule := range []string{"I-JSON string rule", "member limit"} {
		if i >= len(es) || es[i].Reason != orders.MalformedMessage || es[i].MessageID != ids[i+1] || !strings.Contains(es[i].Description, rule) {
			t.Errorf("envelope %d: %+v, want MalformedMessage for %s naming the %s", i, es, ids[i+1], rule)
		}
	}
	if n := len(handlertest.DocumentsOfType(partition(t, ids[0]), "order")); n != 1 {
		t.Errorf("the valid batch-mate: %d orders stored, want 1", n)
	}
}

// A batch ends with a summary line (and structured counts) by outcome; a
// batch that parks nothing has no parking output.
func TestBatchSummaryCountsOutcomes(t *testing.T) {
	s := startBatchServer(t, testEnv(t).Store, 2)
	id, body := handlertest.UniqueOrder(t)
	id2, body2 := handlertest.UniqueOrder(t)
	bad := []byte(strings.Replace(string(body2), `"currency":"EUR"`, `"currency":"eur"`, 1))
	start := time.Now()
	a := s.invokeFunction(t, FunctionProcessOrderBatch, hostBatch([]batchMessage{{body, id, 1, ""}, {body, id, 1, ""}, {bad, id2, 1, ""}}))
	elapsed := time.Since(start)
	if a.Status != http.StatusOK {
		t.Fatalf("status %d", a.Status)
	}
	if got, want := a.Logs[len(a.Logs)-1], "ProcessOrderBatch: 3 messages: 1 created, 1 duplicate, 1 invalid"; got != want {
		t.Errorf("summary %q, want %q", got, want)
	}
	for _, line := range strings.Split(s.logsOf(a), "\n") {
		var l map[string]any
		if json.Unmarshal([]byte(line), &l) != nil || l["msg"] != "batch" {
			continue
		}
		if l["count.created"] != 1.0 || l["count.duplicate"] != 1.0 || l["count.invalid"] != 1.0 || l["parked"] != 1.0 {
			t.Errorf("batch line %v", l)
		}
		if d, _ := l["durationMs"].(float64); d <= 0 || d > float64(elapsed.Milliseconds()+1) {
			t.Errorf("durationMs %v, want a positive figure within the %v the request took", d, elapsed)
		}
		return
	}
	t.Errorf("no batch line in %s", s.logsOf(a))
}

// A batch that parks and requeues nothing names neither output: no empty
// array or null for the host to read.
func TestBatchWithNothingParkedHasNoParkingOutput(t *testing.T) {
	s := startBatchServer(t, testEnv(t).Store, 2)
	id, body := handlertest.UniqueOrder(t)
	a := s.invokeFunction(t, FunctionProcessOrderBatch, hostBatch([]batchMessage{{body, id, 1, ""}}))
	_, parking := a.Outputs[ParkingBinding]
	_, requeue := a.Outputs[RequeueBinding]
	if a.Status != http.StatusOK || parking || requeue {
		t.Errorf("status %d, outputs %v: want 200 and no parking or requeue output", a.Status, a.Outputs)
	}
}
