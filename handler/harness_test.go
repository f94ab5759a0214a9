package handler

// The in-process harness every test of the package shares: the handler
// served by handlertest (the host's side of the wire), and what the tests
// read of an answer.

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ordersink/orders-consumer/cosmos"
	"github.com/ordersink/orders-consumer/handler/handlertest"
	"github.com/ordersink/orders-consumer/orders"
)

// answer is what the host reads back from one invocation, with what this
// package's tests read of it.
type answer struct{ handlertest.Answer }

// parked decodes Outputs.parking, or returns nil when there is none.
func (a answer) parked(t *testing.T) *ParkingEnvelope {
	t.Helper()
	raw, ok := a.Outputs[ParkingBinding]
	if !ok {
		return nil
	}
	var e ParkingEnvelope
	if err := json.Unmarshal(raw, &e); err != nil {
		t.Fatalf("parking output is not an envelope object: %s", raw)
	}
	return &e
}

// storedOrder is the order document of orderID's partition; the test fails
// unless there is exactly one.
func storedOrder(t *testing.T, orderID string) map[string]any {
	t.Helper()
	docs := handlertest.DocumentsOfType(partition(t, orderID), orders.TypeOrder)
	if len(docs) != 1 {
		t.Fatalf("partition %s holds %d orders, want 1", orderID, len(docs))
	}
	return docs[0]
}

// testServer is the handler served by handlertest, ProcessOrder the function
// invoke calls.
type testServer struct{ *handlertest.Server }

func startServer(t *testing.T, store orders.Store, timeout time.Duration) *testServer {
	t.Helper()
	return startServerWith(t, Config{Processor: &orders.Processor{Store: store}, MessageDeadline: timeout})
}

// startServerWith serves cfg, logging to the returned server's Logs.
func startServerWith(t testing.TB, cfg Config) *testServer {
	t.Helper()
	return &testServer{handlertest.Start(t, func(log *slog.Logger) http.Handler {
		cfg.Logger = log
		return NewServer(cfg)
	})}
}

// invoke invokes ProcessOrder with a host-format request (Server.Invoke).
func (s *testServer) invoke(t *testing.T, request []byte) answer {
	t.Helper()
	return s.invokeFunction(t, FunctionProcessOrder, request)
}

// invokeFunction is invoke for any function of the app.
func (s *testServer) invokeFunction(t *testing.T, function string, request []byte) answer {
	t.Helper()
	return answer{s.Invoke(t, function, request)}
}

// call is invokeFunction for goroutines (Server.Call).
func (s *testServer) call(function string, request []byte) (answer, error) {
	a, err := s.Call(function, request)
	return answer{a}, err
}

// logsOf returns the structured log lines of one invocation (Server.LogsOf).
func (s *testServer) logsOf(a answer) string { return s.LogsOf(a.Answer) }

// created stores a fresh order (handlertest.UniqueOrder) through ProcessOrder and
// returns it.
func (s *testServer) created(t *testing.T) (id string, body []byte) {
	t.Helper()
	id, body = handlertest.UniqueOrder(t)
	if a := s.invoke(t, hostInvocation(body, id, 1)); a.Status != http.StatusOK {
		t.Fatalf("create %s: %d", id, a.Status)
	}
	return id, body
}

// partition is the decoded documents of orderID's partition in the test
// store.
func partition(t *testing.T, orderID string) []map[string]any {
	t.Helper()
	return handlertest.Partition(t, testStore(t), orderID)
}

// docsOf reads a partition as raw documents keyed by id.
func docsOf(t *testing.T, orderID string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, d := range partition(t, orderID) {
		b, _ := json.Marshal(d)
		out[d["id"].(string)] = string(b)
	}
	return out
}

// countingTransport records the requests a Store sends, naming transactional
// batches apart from other POSTs.
type countingTransport struct {
	base http.RoundTripper
	mu   sync.Mutex
	seen []string
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	kind := r.Method + " " + r.URL.Path
	if strings.EqualFold(r.Header.Get("x-ms-cosmos-is-batch-request"), "true") {
		kind = "BATCH " + r.URL.Path
	}
	c.mu.Lock()
	c.seen = append(c.seen, kind)
	c.mu.Unlock()
	return c.base.RoundTrip(r)
}

// since returns the requests recorded after the first n.
func (c *countingTransport) since(n int) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.seen[n:]...)
}

func (c *countingTransport) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.seen)
}

// countingStore opens a Store on the test database whose requests are
// recorded, and warms it up (account and container metadata) so that later
// counts are the round trips of the operations alone.
func countingStore(t *testing.T) (*cosmos.Store, *countingTransport) {
	t.Helper()
	ct := &countingTransport{base: http.DefaultTransport.(*http.Transport).Clone()}
	o := testEnv(t).Options()
	o.Transport = ct
	store, err := cosmos.Open(o, testEnv(t).Database, testEnv(t).Container)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := store.PartitionDocuments(ctx, "warm-up"); err != nil {
		t.Fatal(err)
	}
	return store, ct
}
