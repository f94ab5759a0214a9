package handler

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ordersink/orders-consumer/cosmos"
	"github.com/ordersink/orders-consumer/internal/cosmostest"
	"github.com/ordersink/orders-consumer/orders"
	"github.com/ordersink/orders-consumer/retrying"
)

// Clocks scaled down for the outage tests: a hold of 2 s stands for the
// 4-minute default, a probe interval of 100 ms for the 1 s one. The attempt
// timeout leaves room for the race detector on a loaded machine.
const (
	testHold          = 2 * time.Second
	testBatchDeadline = 2 * time.Second
	testLock          = 3 * time.Second // what the batch deadline must stay below
	testProbe         = 100 * time.Millisecond
	testAttempt       = 800 * time.Millisecond
)

// outageBench is the handler, with its production wiring (a retrying.Store
// and one Health), in front of a proxy that can take Cosmos DB away.
type outageBench struct {
	*testServer
	proxy  *cosmostest.OutageProxy
	health *retrying.Health
}

// startOutageBench starts the bench with the proxy in state f from the
// start; warm makes one order go through first, as in a handler that has
// been serving before the outage.
func startOutageBench(t *testing.T, f cosmostest.Fault, warm bool) *outageBench {
	t.Helper()
	return startOutageBenchWith(t, f, warm, testHold, testBatchDeadline)
}

// startOutageBenchWith is startOutageBench with the invocations' deadlines.
func startOutageBenchWith(t *testing.T, f cosmostest.Fault, warm bool, messageDeadline, batchDeadline time.Duration) *outageBench {
	t.Helper()
	env := testEnv(t)
	proxy, err := cosmostest.StartOutageProxy(env.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(proxy.Close)
	store, err := cosmos.Open(cosmos.Options{Endpoint: proxy.URL(), Key: env.Key}, env.Database, env.Container)
	if err != nil {
		t.Fatal(err)
	}
	health := &retrying.Health{ProbeInterval: testProbe}
	b := &outageBench{proxy: proxy, health: health, testServer: startServerWith(t, Config{
		Processor: &orders.Processor{Store: &retrying.Store{Store: store, Health: health, AttemptTimeout: testAttempt,
			Backoff: retrying.Backoff{Initial: testProbe / 10, Max: testProbe}}},
		MessageDeadline: messageDeadline, BatchDeadline: batchDeadline, Health: health, AuthAlarmAfter: 500 * time.Millisecond,
	})}
	if warm {
		id, body := uniqueOrder(t)
		if a := b.invoke(t, hostInvocation(body, id, 1)); a.Status != http.StatusOK {
			t.Fatalf("warm-up order: status %d", a.Status)
		}
	}
	proxy.Set(f)
	return b
}

// deliver plays the broker for one message: it delivers it, at once again
// after every failed answer, until an answer completes it or the queue's
// maxDeliveryCount (10) dead-letters it. It returns the completing answer
// and the delivery that got it (11 when dead-lettered).
func (b *outageBench) deliver(body []byte, id string) (answer, int, error) {
	for n := 1; n <= 10; n++ {
		a, err := b.call(FunctionProcessOrder, hostInvocation(body, id, n))
		if err != nil || a.Status/100 == 2 {
			return a, n, err
		}
	}
	return answer{}, 11, nil
}

// An outage longer than nine immediate redeliveries (which take
// milliseconds) parks nothing: every delivery holds, and the orders are
// created once Cosmos DB answers, within one probe interval or so.
func TestOutageLongerThanNineImmediateRedeliveries(t *testing.T) {
	for _, tc := range []struct {
		name  string
		fault cosmostest.Fault
	}{{"connection refused", cosmostest.Refused}, {"403 while a role propagates", cosmostest.Forbidden}, {"no answer", cosmostest.Silent}} {
		t.Run(tc.name, func(t *testing.T) {
			b := startOutageBench(t, tc.fault, true)
			const n, outage = 6, 2500 * time.Millisecond
			type done struct {
				id         string
				a          answer
				deliveries int
				at         time.Time
				err        error
			}
			results := make(chan done, n)
			for range n {
				id, body := uniqueOrder(t)
				go func() {
					a, deliveries, err := b.deliver(body, id)
					results <- done{id, a, deliveries, time.Now(), err}
				}()
			}
			time.Sleep(outage)
			back := time.Now()
			b.proxy.Set(cosmostest.Up)
			var last time.Time
			maxDeliveries := 0
			for range n {
				r := <-results
				// "duplicate" is right too: an attempt whose answer was cut
				// by its timeout may have written the order.
				if o := r.a.outcome(); r.err != nil || r.deliveries > 10 || r.a.parked(t) != nil || o != "created" && o != "duplicate" {
					t.Errorf("order %s: delivery %d, answer %+v, err %v: want created, nothing parked or dead-lettered", r.id, r.deliveries, r.a, r.err)
					continue
				}
				if n := len(partition(t, r.id)); n != 2 {
					t.Errorf("order %s: %d documents, want the order and its event once", r.id, n)
				}
				maxDeliveries = max(maxDeliveries, r.deliveries)
				if r.at.After(last) {
					last = r.at
				}
			}
			recovery := last.Sub(back)
			t.Logf("outage %s (%s): %d orders created by delivery %d; recovery (Cosmos back -> last order created) %s",
				outage, tc.name, n, maxDeliveries, recovery.Round(time.Millisecond))
			// The promise is 5 s; with these clocks it is a probe interval
			// plus an attempt, and the rest is slack for a loaded machine.
			if recovery > 5*time.Second {
				t.Errorf("recovery took %s, want within 5 s", recovery)
			}
			if maxDeliveries > 3 {
				t.Errorf("%d deliveries spent in a %s outage with a %s hold", maxDeliveries, outage, testHold)
			}
			if tc.fault == cosmostest.Forbidden {
				logs := b.logs.String()
				if !strings.Contains(logs, `"level":"ERROR","msg":"store still down"`) || !strings.Contains(logs, `"subStatus":5301`) {
					t.Errorf("a 403 lasting past AuthAlarmAfter was not logged at ERROR with its substatus:\n%s", logs)
				}
			}
			if !strings.Contains(b.logs.String(), `"msg":"store back"`) {
				t.Error("the log does not say when the store came back")
			}
		})
	}
}

// A handler started while Cosmos DB is away serves as soon as it is back,
// whatever the SDK cached of its failed first account read; GET / answers
// at once meanwhile.
func TestHandlerStartedDuringAnOutage(t *testing.T) {
	for _, tc := range []struct {
		name  string
		fault cosmostest.Fault
	}{{"connection refused", cosmostest.Refused}, {"403", cosmostest.Forbidden}, {"no answer", cosmostest.Silent},
		{"403 after the account read", cosmostest.ForbiddenData}} {
		t.Run(tc.name, func(t *testing.T) {
			b := startOutageBench(t, tc.fault, false)
			id, body := uniqueOrder(t)
			held := make(chan answer, 1)
			go func() {
				a, _ := b.call(FunctionProcessOrder, hostInvocation(body, id, 1))
				held <- a
			}()
			time.Sleep(testHold / 2)
			start := time.Now()
			resp, err := http.Get(b.url + "/")
			if err != nil || resp.StatusCode != http.StatusOK || time.Since(start) > 200*time.Millisecond {
				t.Errorf("GET / during the outage: %v, %v after %s", resp, err, time.Since(start))
			}
			if err == nil {
				resp.Body.Close()
			}
			if a := <-held; a.Status != http.StatusServiceUnavailable {
				t.Fatalf("delivery 1 during the outage: status %d, want 503 at the deadline", a.Status)
			}
			back := time.Now()
			b.proxy.Set(cosmostest.Up)
			a := b.invoke(t, hostInvocation(body, id, 2))
			took := time.Since(back)
			if a.Status != http.StatusOK || a.outcome() != "created" {
				t.Fatalf("delivery 2 after Cosmos DB came back: status %d, %v", a.Status, a.Logs)
			}
			t.Logf("started during an outage (%s): first order created %s after Cosmos DB answered", tc.name, took.Round(time.Millisecond))
			if took > 5*time.Second {
				t.Errorf("served %s after recovery, want within 5 s", took)
			}
		})
	}
}

// A batch against a Cosmos DB that never answers is answered within its
// lock: 503 when all its messages are young; completed when one is on its
// last delivery, that one parked and the young ones given back, and what is
// given back creates the order, unchanged, once Cosmos DB answers.
func TestBatchAgainstACosmosThatNeverAnswers(t *testing.T) {
	b := startOutageBench(t, cosmostest.Silent, true)
	var ids [3]string
	var bodies [3][]byte
	t.Run("ids", func(t *testing.T) {
		for i := range ids {
			ids[i], bodies[i] = uniqueOrder(t)
		}
	})
	timed := func(msgs []batchMessage) answer {
		start := time.Now()
		a := b.invokeFunction(t, FunctionProcessOrderBatch, hostBatch(msgs))
		if took := time.Since(start); took > testLock {
			t.Errorf("batch answered after %s, past its %s lock", took, testLock)
		}
		return a
	}
	young := []batchMessage{{bodies[0], ids[0], 1, ""}, {bodies[1], ids[1], 2, ""}, {bodies[2], ids[2], 1, ""}}
	if a := timed(young); a.Status != http.StatusServiceUnavailable {
		t.Fatalf("young batch: status %d, want 503", a.Status)
	}

	a := timed([]batchMessage{{bodies[0], ids[0], orders.DefaultRetryBudget, ""}, young[1], young[2]})
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

	// Given back, they come in again as new messages, to either function.
	b.proxy.Set(cosmostest.Up)
	text := func(q Requeued) []byte { return []byte(hostOutputText(t, map[string]Requeued{requeueKey: q})) }
	a = b.invokeFunction(t, FunctionProcessOrderBatch, hostBatch([]batchMessage{{text(requeued[0]), "sb-1", 1, ""}}))
	if a.Status != http.StatusOK || strings.Join(a.outcomes(), " ") != "created" || !strings.Contains(a.firstLog(), "(delivery 3)") {
		t.Fatalf("given back to the batch function: status %d, %v", a.Status, a.Logs)
	}
	a = b.invoke(t, hostInvocation(text(requeued[1]), "sb-2", 1))
	if a.Status != http.StatusOK || a.outcome() != "created" || !strings.Contains(a.firstLog(), "(delivery 2)") {
		t.Fatalf("given back to ProcessOrder: status %d, %v", a.Status, a.Logs)
	}
	for _, i := range []int{1, 2} {
		docs := documentsOfType(partition(t, ids[i]), orders.TypeOrder)
		want, _ := orders.ParseOrder(bodies[i])
		if len(docs) != 1 || docs[0]["requestHash"] != want.Hash || docs[0]["messageId"] != ids[i] {
			t.Errorf("order %s stored as %v, want the original body's fingerprint and MessageId", ids[i], docs)
		}
	}
}

// Every message at its last delivery with a final outcome keeps its
// envelope, even beside a transient batch-mate, which is given back.
func TestBatchLastDeliveryWithFinalOutcomeBesideATransientMate(t *testing.T) {
	var bad, mate, mis string
	var badb, mateb, misb []byte
	t.Run("ids", func(t *testing.T) {
		bad, badb = uniqueOrder(t)
		badb = []byte(strings.Replace(string(badb), `"currency":"EUR"`, `"currency":"euro"`, 1))
		mate, mateb = uniqueOrder(t)
		mis, misb = uniqueOrder(t)
	})
	store := flakyStore{readableStore: testStore(t), failing: map[string]bool{mate: true}}
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
