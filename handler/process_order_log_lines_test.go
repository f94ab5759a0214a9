package handler

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ordersink/orders-consumer/handler/handlertest"
)

// The line the host shows in its own log (Logs in the answer) says what
// happened to which message in words: tests elsewhere read only its outcome
// word, so its wording is pinned here.
func TestHumanLogLines(t *testing.T) {
	s := startServer(t, testEnv(t).Store, 0)
	id, body := handlertest.UniqueOrder(t)
	bad := strings.Replace(string(body), `"currency":"EUR"`, `"currency":"eur"`, 1)
	tests := []struct {
		name    string
		request []byte
		want    string // the whole line, or its start when prefix
		prefix  bool
	}{
		{"created", hostInvocation(body, id, 1), "ProcessOrder: created " + id + " (delivery 1)", false},
		{"status applied", statusInvocation(t, id, "Paid", 3, 2), "ProcessOrder: applied " + id + " status v3 (delivery 2)", false},
		{"parked", hostInvocation([]byte(bad), "m-bad", 4), "ProcessOrder: invalid " + id + " (delivery 4), parked as ValidationFailed: currency", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := s.invoke(t, tc.request)
			if a.Status != http.StatusOK || len(a.Logs) != 1 {
				t.Fatalf("status %d, logs %v", a.Status, a.Logs)
			}
			if got := a.Logs[0]; got != tc.want && !(tc.prefix && strings.HasPrefix(got, tc.want)) {
				t.Errorf("log line %q\nwant          %q", got, tc.want)
			}
		})
	}

}

// durationMs is in milliseconds: never more than the wall clock the caller
// saw around the whole request.
func TestLogDurationIsMilliseconds(t *testing.T) {
	s := startServer(t, testEnv(t).Store, 0)
	id, body := handlertest.UniqueOrder(t)
	start := time.Now()
	a := s.invoke(t, hostInvocation(body, id, 1))
	elapsed := time.Since(start)
	var l struct {
		DurationMs float64 `json:"durationMs"`
	}
	if err := json.Unmarshal([]byte(s.logsOf(a)), &l); err != nil {
		t.Fatalf("log %q: %v", s.logsOf(a), err)
	}
	if l.DurationMs <= 0 || l.DurationMs > float64(elapsed.Milliseconds()+1) {
		t.Errorf("durationMs %v, want a positive figure within the %v the request took", l.DurationMs, elapsed)
	}
}

// A stale status change is counted, not parked: its structured line is
// where an operator reads why it was not applied.
func TestStaleStatusLineSaysWhy(t *testing.T) {
	s := startServer(t, testEnv(t).Store, 0)
	id, _ := handlertest.UniqueOrder(t)
	lineOf := func(a answer) map[string]any {
		t.Helper()
		var l map[string]any
		if err := json.Unmarshal([]byte(s.logsOf(a)), &l); err != nil {
			t.Fatalf("log %q: %v", s.logsOf(a), err)
		}
		return l
	}
	applied := lineOf(s.invoke(t, statusInvocation(t, id, "Paid", 3, 1)))
	stale := lineOf(s.invoke(t, statusInvocation(t, id, "Placed", 2, 1)))
	if applied["outcome"] != "applied" || applied["description"] != nil {
		t.Errorf("applied line %v: want no description", applied)
	}
	if d, _ := stale["description"].(string); stale["outcome"] != "stale" || d == "" {
		t.Errorf("stale line %v: want a description", stale)
	}
}
