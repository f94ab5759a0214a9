package handler

import (
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
