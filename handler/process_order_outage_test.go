package handler

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ordersink/orders-consumer/cosmos"
	"github.com/ordersink/orders-consumer/cosmos/cosmostest"
	"github.com/ordersink/orders-consumer/handler/handlertest"
	"github.com/ordersink/orders-consumer/orders"
	"github.com/ordersink/orders-consumer/orders/orderstest"
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
	store  *cosmos.Store // through the proxy
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
	b := &outageBench{proxy: proxy, health: health, store: store, testServer: startServerWith(t, Config{
		Processor: &orders.Processor{Store: &retrying.Store{Store: store, Health: health, AttemptTimeout: testAttempt,
			Backoff: retrying.Backoff{Initial: testProbe / 10, Max: testProbe}}},
		MessageDeadline: messageDeadline, BatchDeadline: batchDeadline, Health: health, AuthAlarmAfter: 500 * time.Millisecond,
	})}
	if warm {
		id, body := handlertest.UniqueOrder(t)
		if a := b.invoke(t, hostInvocation(body, id, 1)); a.Status != http.StatusOK {
			t.Fatalf("warm-up order: status %d", a.Status)
		}
	}
	proxy.Set(f)
	return b
}

// documents reads the order's partition, through the proxy (so not while
// it takes Cosmos DB away).
func (b *outageBench) documents(orderID string) ([]json.RawMessage, error) {
	return b.store.PartitionDocuments(context.Background(), orderID)
}

// deliver plays the broker for one message: it delivers it, at once again
// after every failed answer, until an answer completes it or the queue's
// maxDeliveryCount (10) dead-letters it. It returns the completing answer
// and the delivery that got it (11 when dead-lettered). answered, when not
// nil, is told the number of each delivery that got an answer.
func (b *outageBench) deliver(body []byte, id string, answered func(delivery int)) (answer, int, error) {
	for n := 1; n <= 10; n++ {
		a, err := b.call(FunctionProcessOrder, hostInvocation(body, id, n))
		if answered != nil {
			answered(n)
		}
		if err != nil || a.Status/100 == 2 {
			return a, n, err
		}
	}
	return answer{}, 11, nil
}

// delivered is how the broker's deliveries of one order ended, and when.
type delivered struct {
	id         string
	a          answer
	deliveries int
	at         time.Time
	err        error
}

// An outage longer than nine immediate redeliveries (which take
// milliseconds) parks nothing: every delivery holds, and the orders are
// created, once each, once Cosmos DB answers. The outage lasts until every
// order's first delivery has held to its deadline and been answered (an
// event, not a length of wall time). The recovery time is logged; the
// promise of 5 s is timed on virtual time by TestOutageOnProductionClocks.
func TestOutageLongerThanNineImmediateRedeliveries(t *testing.T) {
	for _, tc := range []struct {
		name  string
		fault cosmostest.Fault
	}{{"connection refused", cosmostest.Refused}, {"403 while a role propagates", cosmostest.Forbidden}, {"no answer", cosmostest.Silent}} {
		t.Run(tc.name, func(t *testing.T) {
			b := startOutageBench(t, tc.fault, true)
			const n = 6
			results := make(chan delivered, n)
			var firstAnswered sync.WaitGroup
			firstAnswered.Add(n)
			for range n {
				id, body := handlertest.UniqueOrder(t)
				go func() {
					a, deliveries, err := b.deliver(body, id, func(delivery int) {
						if delivery == 1 {
							firstAnswered.Done()
						}
					})
					results <- delivered{id, a, deliveries, time.Now(), err}
				}()
			}
			firstAnswered.Wait()
			back := time.Now()
			b.proxy.Set(cosmostest.Up)
			var last time.Time
			maxDeliveries := 0
			for range n {
				r := <-results
				// "duplicate" is right too: an attempt whose answer was cut
				// by its timeout may have written the order.
				if o := r.a.Outcome(); r.err != nil || r.deliveries > 10 || r.a.parked(t) != nil || o != "created" && o != "duplicate" {
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
			t.Logf("%s: %d orders created by delivery %d; recovery (Cosmos back -> last order created) %s",
				tc.name, n, maxDeliveries, last.Sub(back).Round(time.Millisecond))
			if maxDeliveries > 3 {
				t.Errorf("%d deliveries spent in an outage of one deadline (%s)", maxDeliveries, testHold)
			}
			if tc.fault == cosmostest.Forbidden {
				logs := b.Logs.String()
				if !strings.Contains(logs, `"level":"ERROR","msg":"store still down"`) || !strings.Contains(logs, `"subStatus":5301`) {
					t.Errorf("a 403 lasting past AuthAlarmAfter was not logged at ERROR with its substatus:\n%s", logs)
				}
			}
			if !strings.Contains(b.Logs.String(), `"msg":"store back"`) {
				t.Error("the log does not say when the store came back")
			}
		})
	}
}

// TestOutageOnProductionClocks: with cmd/handler's clocks (MESSAGE_DEADLINE
// 4 min, probes at most 1 s apart, attempts cut at 4 s) and a broker that
// redelivers at once, an outage of 30 minutes parks nothing, whatever its
// kind: each delivery holds to its deadline, so the orders held by all 16
// concurrent calls (maxConcurrentCalls) are created by their 8th delivery,
// inside the retry budget of 9, and within the consumer's 5 s of Cosmos DB
// answering again (docs/contract.md §2). On virtual time: the 30 minutes
// take milliseconds, and the bounds are exact on any machine.
func TestOutageOnProductionClocks(t *testing.T) {
	for _, tc := range []struct {
		name  string
		fault cosmostest.Fault
	}{{"connection refused", cosmostest.Refused}, {"403 while a role propagates", cosmostest.Forbidden}, {"no answer", cosmostest.Silent}} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				store := newOutageStore(tc.fault)
				b := &outageBench{testServer: startServerIn(t, productionWiring(store))}
				const n, outage = 16, 30 * time.Minute
				results := make(chan delivered, n)
				for i := range n {
					id := fmt.Sprintf("ORD-OUTAGE-%02d", i)
					go func() {
						a, deliveries, err := b.deliver(orderstest.ExampleBodyWithID(id), id, nil)
						results <- delivered{id, a, deliveries, time.Now(), err}
					}()
				}
				time.Sleep(outage)
				back := time.Now()
				store.Set(cosmostest.Up)
				for range n {
					r := <-results
					if r.err != nil || r.a.Outcome() != "created" || r.a.parked(t) != nil || r.deliveries != 8 {
						t.Errorf("order %s: %v, outcome %q at delivery %d; want created at delivery 8, nothing parked", r.id, r.err, r.a.Outcome(), r.deliveries)
					}
					if took := r.at.Sub(back); took > 5*time.Second {
						t.Errorf("order %s created %s after Cosmos DB answered again, want within 5 s", r.id, took)
					}
					if docs, _ := store.PartitionDocuments(context.Background(), r.id); len(docs) != 2 {
						t.Errorf("order %s: %d documents, want the order and its event once", r.id, len(docs))
					}
				}
				logs := b.Logs.String()
				if tc.fault == cosmostest.Forbidden && (!strings.Contains(logs, `"level":"ERROR","msg":"store still down"`) || !strings.Contains(logs, `"subStatus":5301`)) {
					t.Errorf("a 403 lasting past AUTH_ALARM_AFTER was not logged at ERROR with its substatus:\n%s", logs)
				}
				if !strings.Contains(logs, `"msg":"store back"`) {
					t.Error("the log does not say when the store came back")
				}
			})
		})
	}
}

// A handler started while Cosmos DB is away serves as soon as it is back,
// whatever the SDK cached of its failed first account read: the delivery
// after Cosmos DB answers again creates the order, within its own deadline.
// GET / answers meanwhile (at once: TestReadinessDuringAnOutage).
func TestHandlerStartedDuringAnOutage(t *testing.T) {
	for _, tc := range []struct {
		name  string
		fault cosmostest.Fault
	}{{"connection refused", cosmostest.Refused}, {"403", cosmostest.Forbidden}, {"no answer", cosmostest.Silent},
		{"403 after the account read", cosmostest.ForbiddenData}} {
		t.Run(tc.name, func(t *testing.T) {
			b := startOutageBench(t, tc.fault, false)
			id, body := handlertest.UniqueOrder(t)
			held := make(chan answer, 1)
			go func() {
				a, _ := b.call(FunctionProcessOrder, hostInvocation(body, id, 1))
				held <- a
			}()
			resp, err := http.Get(b.URL + "/")
			if err != nil || resp.StatusCode != http.StatusOK {
				t.Errorf("GET / during the outage: %v, %v", resp, err)
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
			// "duplicate" too: on a loaded machine an attempt of delivery 2
			// cut at testAttempt may have landed, and its retry meets the
			// order it stored (delivery 1 stored nothing: every request
			// was refused). Either way the order is there once.
			if a.Status != http.StatusOK || a.Outcome() != "created" && a.Outcome() != "duplicate" {
				t.Fatalf("delivery 2 after Cosmos DB came back: status %d, %v", a.Status, a.Logs)
			}
			if docs, err := b.documents(id); err != nil || len(docs) != 2 {
				t.Errorf("order %s: %d documents (%v), want the order and its event once", id, len(docs), err)
			}
			t.Logf("started during an outage (%s): first order created %s after Cosmos DB answered", tc.name, time.Since(back).Round(time.Millisecond))
		})
	}
}

// TestReadinessDuringAnOutage: the host's readiness probe (GET /) is
// answered at once while an invocation is held by a Cosmos DB that does not
// answer: it touches no store. On virtual time, so "at once" is exact.
func TestReadinessDuringAnOutage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := newOutageStore(cosmostest.Silent)
		b := startServerIn(t, productionWiring(store))
		held := make(chan answer, 1)
		go func() {
			a, _ := b.call(FunctionProcessOrder, hostInvocation(orderstest.ExampleBodyWithID("ORD-READY-1"), "ORD-READY-1", 1))
			held <- a
		}()
		synctest.Wait() // the invocation waits for the store
		start := time.Now()
		resp, err := b.Client.Get(b.URL + "/")
		if err != nil || resp.StatusCode != http.StatusOK || time.Since(start) != 0 {
			t.Errorf("GET / during the outage: %v, %v after %s; want 200 at once", resp, err, time.Since(start))
		}
		if err == nil {
			resp.Body.Close()
		}
		select {
		case a := <-held:
			t.Errorf("the invocation answered %d before the probe: it was not held", a.Status)
		default:
		}
		store.Set(cosmostest.Up)
		if a := <-held; a.Status != http.StatusOK {
			t.Errorf("the held invocation: status %d once Cosmos DB answers, want 200", a.Status)
		}
	})
}

// A body the rules refuse is looked up first (its orderId may hold this
// very content: then it is a duplicate, docs/adr/0015-the-key-first.md).
// That read holds through an outage as the writes do: on cmd/handler's
// clocks, 30 minutes without Cosmos DB park the refused messages with
// their own reason once it answers again, never RetryBudgetExhausted
// after nine deliveries that each failed at once (make soak, seed 234223:
// an invalid message delivered during the 60 s outage was parked
// RetryBudgetExhausted after 36 s).
func TestRefusedBodyHeldThroughAnOutage(t *testing.T) {
	for _, tc := range []struct {
		name  string
		fault cosmostest.Fault
	}{{"connection refused", cosmostest.Refused}, {"403 while a role propagates", cosmostest.Forbidden}, {"no answer", cosmostest.Silent}} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				store := newOutageStore(tc.fault)
				b := &outageBench{testServer: startServerIn(t, productionWiring(store))}
				const n, outage = 4, 30 * time.Minute
				results := make(chan delivered, n)
				for i := range n {
					id := fmt.Sprintf("ORD-REFUSED-%02d", i)
					body := []byte(strings.Replace(string(orderstest.ExampleBodyWithID(id)), `"total":"44.98"`, `"total":"44.99"`, 1))
					go func() {
						a, deliveries, err := b.deliver(body, id, nil)
						results <- delivered{id, a, deliveries, time.Now(), err}
					}()
				}
				time.Sleep(outage)
				store.Set(cosmostest.Up)
				for range n {
					r := <-results
					p := r.a.parked(t)
					if r.err != nil || p == nil || p.Reason != orders.ValidationFailed || r.deliveries > 8 {
						reason := orders.Reason("")
						if p != nil {
							reason = p.Reason
						}
						t.Errorf("refused order %s: %v, outcome %q, parked %q at delivery %d; want parked ValidationFailed by delivery 8",
							r.id, r.err, r.a.Outcome(), reason, r.deliveries)
					}
				}
			})
		})
	}
}
