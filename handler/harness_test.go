package handler

// The in-process harness every test of the package shares: a handler served
// by httptest, host-format invocations, what the host reads back.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ordersink/orders-consumer/orders"
	"github.com/ordersink/orders-consumer/orders/orderstest"
)

// answer is what the host reads back from one invocation.
type answer struct {
	Status  int
	Outputs map[string]json.RawMessage
	Logs    []string
	// InvocationID is the X-Azure-Functions-InvocationId the request carried;
	// testServer.logsOf finds the invocation's own log lines with it.
	InvocationID string
}

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

// firstLog is the invocation's first log line, "" when it logged none: a
// check that reads it fails and says so, where indexing Logs would abort the
// whole test binary and hide every later test's result.
func (a answer) firstLog() string {
	if len(a.Logs) == 0 {
		return ""
	}
	return a.Logs[0]
}

// outcome is the outcome of the invocation's first log line ("created",
// "duplicate"…), "" when it logged none.
func (a answer) outcome() string { return outcomeOf(a.firstLog()) }

// storedOrder is the order document of orderID's partition; the test fails
// unless there is exactly one.
func storedOrder(t *testing.T, orderID string) map[string]any {
	t.Helper()
	docs := documentsOfType(partition(t, orderID), orders.TypeOrder)
	if len(docs) != 1 {
		t.Fatalf("partition %s holds %d orders, want 1", orderID, len(docs))
	}
	return docs[0]
}

type testServer struct {
	url  string
	logs *orderstest.Buffer
	// client sends the invocations: nil is http.DefaultClient, one over a
	// network in memory for a server in a synctest bubble (startServerIn).
	client *http.Client
}

func startServer(t *testing.T, store orders.Store, timeout time.Duration) *testServer {
	t.Helper()
	return startServerWith(t, Config{Processor: &orders.Processor{Store: store}, MessageDeadline: timeout})
}

// startServerWith serves cfg, logging to the returned server's buffer.
func startServerWith(t testing.TB, cfg Config) *testServer {
	t.Helper()
	logs := &orderstest.Buffer{}
	cfg.Logger = slog.New(slog.NewJSONHandler(logs, nil))
	srv := httptest.NewServer(NewServer(cfg))
	t.Cleanup(srv.Close)
	return &testServer{url: srv.URL, logs: logs}
}

// invoke POSTs a host-format invocation and checks the host's rules for the
// answer: every 2xx is application/json with a JSON object holding Outputs,
// Logs and ReturnValue.
func (s *testServer) invoke(t *testing.T, request []byte) answer {
	t.Helper()
	return s.invokeFunction(t, FunctionProcessOrder, request)
}

// invokeFunction is invoke for any function of the app.
func (s *testServer) invokeFunction(t *testing.T, function string, request []byte) answer {
	t.Helper()
	a, err := s.call(function, request)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// call is invokeFunction for goroutines, which must not stop the test: it
// returns what breaks the host's rules as an error.
func (s *testServer) call(function string, request []byte) (answer, error) {
	req, _ := http.NewRequest(http.MethodPost, s.url+"/"+function, bytes.NewReader(request))
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	// Fixed width: envelopes carry the id, and a test that calibrates one
	// at the byte limit must not see it grow a digit between calls.
	invocationID := fmt.Sprintf("inv-%d-%08d", time.Now().UnixNano(), invocations.Add(1))
	req.Header.Set("X-Azure-Functions-InvocationId", invocationID)
	req.Header.Set("User-Agent", "Azure-Functions-Host/4.1037.1.1")
	client := s.client
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return answer{}, fmt.Errorf("invoke: %w", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	a := answer{Status: resp.StatusCode, InvocationID: invocationID}
	if resp.StatusCode/100 != 2 {
		return a, nil
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		return a, fmt.Errorf("2xx answer with Content-Type %q: the host fails the invocation", ct)
	}
	var body map[string]json.RawMessage
	if err := json.Unmarshal(b, &body); err != nil {
		return a, fmt.Errorf("2xx answer is not a JSON object: %s", b)
	}
	for _, k := range []string{"Outputs", "Logs", "ReturnValue"} {
		if _, ok := body[k]; !ok {
			return a, fmt.Errorf("answer lacks %s: %s", k, b)
		}
	}
	if err := json.Unmarshal(body["Outputs"], &a.Outputs); err != nil || a.Outputs == nil {
		return a, fmt.Errorf("outputs is not an object: %s", body["Outputs"])
	}
	if err := json.Unmarshal(body["Logs"], &a.Logs); err != nil || len(a.Logs) == 0 {
		return a, fmt.Errorf("logs has no line: %s", body["Logs"])
	}
	return a, nil
}

// invocations numbers the invocations of a test binary, so that concurrent
// ones never share an invocation id.
var invocations atomic.Int64

// logsOf returns the structured log lines of one invocation, so that an
// assertion cannot be satisfied by a line another invocation wrote.
func (s *testServer) logsOf(a answer) string {
	var own []string
	for _, line := range strings.Split(s.logs.String(), "\n") {
		var l struct {
			InvocationID string `json:"invocationId"`
		}
		if json.Unmarshal([]byte(line), &l) == nil && l.InvocationID == a.InvocationID {
			own = append(own, line)
		}
	}
	return strings.Join(own, "\n")
}

// created stores a fresh order (uniqueOrder) through ProcessOrder and
// returns it.
func (s *testServer) created(t *testing.T) (id string, body []byte) {
	t.Helper()
	id, body = uniqueOrder(t)
	if a := s.invoke(t, hostInvocation(body, id, 1)); a.Status != http.StatusOK {
		t.Fatalf("create %s: %d", id, a.Status)
	}
	return id, body
}

// uniqueOrder returns the contract's example order under a fresh orderId, so
// tests share one database without meeting.
func uniqueOrder(t testing.TB) (id string, body []byte) {
	id = fmt.Sprintf("ORD-%s-%d", strings.ReplaceAll(t.Name(), "/", "-"), time.Now().UnixNano())
	return id, orderstest.ExampleBodyWithID(id)
}

func partition(t *testing.T, orderID string) []map[string]any {
	t.Helper()
	docs, err := testStore(t).PartitionDocuments(context.Background(), orderID)
	if err != nil {
		t.Fatalf("read partition %s: %v", orderID, err)
	}
	out := make([]map[string]any, 0, len(docs))
	for _, d := range docs {
		var m map[string]any
		if err := json.Unmarshal(d, &m); err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
	return out
}

func documentsOfType(docs []map[string]any, typ string) []map[string]any {
	var out []map[string]any
	for _, d := range docs {
		if d["type"] == typ {
			out = append(out, d)
		}
	}
	return out
}
