package handler

import (
	"net/http"
	"testing"
	"time"

	"github.com/ordersink/orders-consumer/cosmos"
	"github.com/ordersink/orders-consumer/internal/cosmostest"
	"github.com/ordersink/orders-consumer/orders"
)

// TestEachFunctionRunsUnderItsOwnDeadline: a ProcessOrderBatch invocation
// answers by BATCH_DEADLINE, which stays below the queue's one-minute lock
// that is never renewed for a batch, not by the single-message
// MESSAGE_DEADLINE (minutes, under a renewed lock); and a ProcessOrder
// invocation holds for its own deadline, not the batch's. Against a Cosmos
// DB that never answers, through the production wiring (a Retrying store
// with one Health), with the two deadlines far apart.
func TestEachFunctionRunsUnderItsOwnDeadline(t *testing.T) {
	const messageDeadline, batchDeadline = 4 * time.Second, 600 * time.Millisecond
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
	health := &orders.Health{ProbeInterval: testProbe}
	s := startServerWith(t, Config{
		Processor: &orders.Processor{Store: &orders.Retrying{Store: store, Health: health, AttemptTimeout: 300 * time.Millisecond,
			Backoff: orders.Backoff{Initial: testProbe / 10, Max: testProbe}}},
		MessageDeadline: messageDeadline, BatchDeadline: batchDeadline, Health: health,
	})
	warm, warmBody := uniqueOrder(t)
	if a := s.invoke(t, hostInvocation(warmBody, warm, 1)); a.Status != http.StatusOK {
		t.Fatalf("warm-up order: status %d", a.Status)
	}
	proxy.Set(cosmostest.Silent)

	ids, bodies := [2]string{}, [2][]byte{}
	for i := range ids {
		ids[i], bodies[i] = uniqueOrder(t)
	}
	start := time.Now()
	a := s.invokeFunction(t, FunctionProcessOrderBatch, hostBatch([]batchMessage{{bodies[0], ids[0], 1, ""}, {bodies[1], ids[1], 2, ""}}))
	took := time.Since(start)
	if a.Status != http.StatusServiceUnavailable {
		t.Fatalf("batch: status %d after %s, want 503", a.Status, took)
	}
	if took < batchDeadline || took > messageDeadline/2 {
		t.Errorf("batch answered after %s, want just after BATCH_DEADLINE %s (MESSAGE_DEADLINE is %s)", took, batchDeadline, messageDeadline)
	}

	start = time.Now()
	a = s.invoke(t, hostInvocation(bodies[0], ids[0], 2))
	took = time.Since(start)
	if a.Status != http.StatusServiceUnavailable {
		t.Fatalf("single message: status %d after %s, want 503", a.Status, took)
	}
	if took < messageDeadline || took > messageDeadline+3*time.Second {
		t.Errorf("single message answered after %s, want just after MESSAGE_DEADLINE %s (BATCH_DEADLINE is %s)", took, messageDeadline, batchDeadline)
	}
}
