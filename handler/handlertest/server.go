// Package handlertest is the Functions host's side of the wire in the tests
// of handler and httpapi, as net/http/httptest is a client's for net/http:
// it serves a custom handler, invokes its functions with requests shaped as
// the host shapes them (docs/host-wire-format.md), and reads each answer as
// the host reads it. It imports neither package, since handler's own tests
// use it: function and binding names are the caller's, as the host takes
// them from function.json.
package handlertest

import (
	"bytes"
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

	"github.com/ordersink/orders-consumer/internal/pipetest"
	"github.com/ordersink/orders-consumer/orders/orderstest"
)

// Server is a custom handler served in a test, and the log it writes.
type Server struct {
	URL string
	// Logs holds the handler's structured log lines, one JSON object each.
	Logs *orderstest.Buffer
	// Client sends the invocations: nil is http.DefaultClient, one over a
	// network in memory for a server in a synctest bubble (StartIn).
	Client *http.Client
}

// Start serves the handler newHandler builds around a logger that writes to
// the Server's Logs; it closes when the test ends.
func Start(t testing.TB, newHandler func(*slog.Logger) http.Handler) *Server {
	t.Helper()
	logs := &orderstest.Buffer{}
	srv := httptest.NewServer(newHandler(slog.New(slog.NewJSONHandler(logs, nil))))
	t.Cleanup(srv.Close)
	return &Server{URL: srv.URL, Logs: logs}
}

// StartIn is Start on a network in memory; the test must run in a synctest
// bubble. The server, its client and the network close when the test ends.
func StartIn(t *testing.T, newHandler func(*slog.Logger) http.Handler) *Server {
	t.Helper()
	logs := &orderstest.Buffer{}
	n := &pipetest.Network{}
	t.Cleanup(n.Drain)
	url := n.Serve(t, "127.0.0.1:7000", newHandler(slog.New(slog.NewJSONHandler(logs, nil))))
	return &Server{URL: url, Logs: logs, Client: n.Client()}
}

// Answer is what the host reads back from one invocation.
type Answer struct {
	Status  int
	Outputs map[string]json.RawMessage
	Logs    []string
	// InvocationID is the X-Azure-Functions-InvocationId the request carried;
	// Server.LogsOf finds the invocation's own log lines with it.
	InvocationID string
}

// FirstLog is the invocation's first log line, "" when it logged none: a
// check that reads it fails and says so, where indexing Logs would abort the
// whole test binary and hide every later test's result.
func (a Answer) FirstLog() string {
	if len(a.Logs) == 0 {
		return ""
	}
	return a.Logs[0]
}

// Outcome is the outcome of the invocation's first log line ("created",
// "duplicate"…), "" when it logged none.
func (a Answer) Outcome() string { return OutcomeOf(a.FirstLog()) }

// OutcomeOf reads the outcome word of a handler log line
// ("ProcessOrder: created ORD-1 (delivery 1)").
func OutcomeOf(line string) string {
	f := strings.Fields(line)
	if len(f) < 2 {
		return ""
	}
	return f[1]
}

// Invoke POSTs a host-format invocation of function and checks the host's
// rules for the answer: every 2xx is application/json with a JSON object
// holding Outputs, Logs and ReturnValue.
func (s *Server) Invoke(t *testing.T, function string, request []byte) Answer {
	t.Helper()
	a, err := s.Call(function, request)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// Call is Invoke for goroutines, which must not stop the test: it returns
// what breaks the host's rules as an error.
func (s *Server) Call(function string, request []byte) (Answer, error) {
	req, _ := http.NewRequest(http.MethodPost, s.URL+"/"+function, bytes.NewReader(request))
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	// Fixed width: envelopes carry the id, and a test that calibrates one
	// at the byte limit must not see it grow a digit between calls.
	invocationID := fmt.Sprintf("inv-%d-%08d", time.Now().UnixNano(), invocations.Add(1))
	req.Header.Set("X-Azure-Functions-InvocationId", invocationID)
	req.Header.Set("User-Agent", "Azure-Functions-Host/4.1037.1.1")
	client := s.Client
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return Answer{}, fmt.Errorf("invoke: %w", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	a := Answer{Status: resp.StatusCode, InvocationID: invocationID}
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

// LogsOf returns the structured log lines of one invocation, so that an
// assertion cannot be satisfied by a line another invocation wrote.
func (s *Server) LogsOf(a Answer) string {
	var own []string
	for _, line := range strings.Split(s.Logs.String(), "\n") {
		var l struct {
			InvocationID string `json:"invocationId"`
		}
		if json.Unmarshal([]byte(line), &l) == nil && l.InvocationID == a.InvocationID {
			own = append(own, line)
		}
	}
	return strings.Join(own, "\n")
}
