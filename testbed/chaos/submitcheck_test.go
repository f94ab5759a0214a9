package chaos

import (
	"strings"
	"testing"

	"github.com/ordersink/orders-consumer/testbed/orderstream"
)

func TestSubmitChecks(t *testing.T) {
	const reused = "https://example.test/docs/http-api.md#idempotency-key-reused"
	subs := []orderstream.Submission{{Key: "k1", OrderID: "W-1", Copies: 2}, {Key: "k2", OrderID: "W-2", Reuse: []byte("{}")}}
	accepted := func(key string, copyNo, attempt int, replayed bool) Answer {
		return Answer{Key: key, OrderID: map[string]string{"k1": "W-1", "k2": "W-2"}[key], Copy: copyNo, Attempt: attempt, Status: 202, Replayed: replayed, Body: `{"orderId":"` + key + `"}`, Location: "/api/orders/" + key}
	}
	good := []Answer{
		{Key: "k1", Copy: 0, Attempt: 1, Status: 0, Err: "timeout"},
		accepted("k1", 1, 1, false),
		{Key: "k1", Copy: 0, Attempt: 2, Status: 409},
		accepted("k1", 0, 3, true),
		{Key: "k2", Attempt: 1, Status: 500},
		accepted("k2", 0, 2, true),
		{Key: "k2", Attempt: 1, Status: 422, ProblemType: reused, Reuse: true},
	}
	tests := []struct {
		name   string
		change func([]Answer) []Answer
		want   string // the check that must fail; "" none
		lost   string // an order with no document
	}{
		{"a good run", func(a []Answer) []Answer { return a }, "", ""},
		{"an accepted order lost", func(a []Answer) []Answer { return a }, "every accepted order stored", "W-2"},
		{"a copy never accepted", func(a []Answer) []Answer { return a[1:3] }, "every submission ends accepted", ""},
		{"two executions", func(a []Answer) []Answer { a[3].Replayed = false; return a }, "one execution per Idempotency-Key", ""},
		{"a replay with another body", func(a []Answer) []Answer { a[3].Body = `{"orderId":"other"}`; return a }, "every replay identical", ""},
		{"a replay elsewhere", func(a []Answer) []Answer { a[3].Location = "/api/orders/x"; return a }, "every replay identical", ""},
		{"the other payload accepted", func(a []Answer) []Answer { a[6] = accepted("k2", 0, 1, false); a[6].Reuse = true; return a }, "every same-key conflict refused", ""},
		{"the other payload refused for another reason", func(a []Answer) []Answer { a[6].ProblemType = "#invalid-order"; return a }, "every same-key conflict refused", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			answers := tc.change(append([]Answer(nil), good...))
			var failed []string
			stored := map[string]bool{"W-1": true, "W-2": true}
			if tc.lost != "" {
				delete(stored, tc.lost)
			}
			for _, c := range SubmitChecks(subs, answers, stored) {
				if len(c.Violations) > 0 {
					failed = append(failed, c.Name+": "+strings.Join(c.Violations, "; "))
				}
			}
			switch {
			case tc.want == "" && len(failed) > 0:
				t.Errorf("violations in a good run: %v", failed)
			case tc.want != "" && (len(failed) != 1 || !strings.Contains(failed[0], tc.want)):
				t.Errorf("failed %v, want only %q", failed, tc.want)
			}
		})
	}
}
