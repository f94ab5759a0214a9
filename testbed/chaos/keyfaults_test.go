package chaos

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ordersink/orders-consumer/idempotency"
	"github.com/ordersink/orders-consumer/testbed/faults"
	"github.com/ordersink/orders-consumer/testbed/orderstream"
)

const keyDocs = "/dbs/shop/colls/idempotency-keys/docs/"

// keyPut is the body of a replace of a key record.
func keyPut(t *testing.T, key, owner string, state idempotency.State) []byte {
	t.Helper()
	b, err := json.Marshal(idempotency.Record{ID: "rec-" + key, Key: key, Owner: owner, State: state})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Only submissions sent once, with no fault of their own, are aimed at;
// the kill and the lost answer each go to a key of their own.
func TestKeyFaultsAimAtPlainSubmissions(t *testing.T) {
	subs := []orderstream.Submission{
		{Key: "k-copies", Copies: 3}, {Key: "k-a", Copies: 1}, {Key: "k-timeout", Copies: 1, FirstTimeout: time.Millisecond},
		{Key: "k-b", Copies: 1}, {Key: "k-race", Copies: 1, Rival: &orderstream.Submission{Key: "k-rival"}},
	}
	k := newKeyFaults("idempotency-keys", subs, 1, 1)
	if len(k.target) != 2 || k.target["k-a"] == k.target["k-b"] || k.target["k-a"] == 0 || k.target["k-b"] == 0 {
		t.Fatalf("targets %v, want k-a and k-b, one kill and one lost answer", k.target)
	}
	if n := len(newKeyFaults("idempotency-keys", subs, 5, 5).target); n != 2 {
		t.Errorf("%d targets among 2 eligible keys", n)
	}
}

func TestKeyFaultsPick(t *testing.T) {
	subs := []orderstream.Submission{{Key: "kill", Copies: 1}, {Key: "lose", Copies: 1}, {Key: "other", Copies: 1}}
	k := newKeyFaults("idempotency-keys", subs, 1, 1)
	k.target = map[string]keyFault{"kill": keyKill, "lose": keyLostAnswer} // spread aside
	kills := 0
	k.setKill(func(int) error { kills++; return nil })
	path := keyDocs + "rec"
	steps := []struct {
		name         string
		method, path string
		body         []byte
		want         faults.Fault
	}{
		{"a read of a record", http.MethodGet, path, nil, -1},
		{"an order create", http.MethodPost, "/dbs/shop/colls/orders/docs", keyPut(t, "kill", "o1", idempotency.Succeeded), -1},
		{"a take-over (started)", http.MethodPut, path, keyPut(t, "kill", "o1", idempotency.Started), -1},
		{"a key not aimed at", http.MethodPut, path, keyPut(t, "other", "o9", idempotency.Succeeded), -1},
		{"the completion aimed at: kill, then drop", http.MethodPut, path, keyPut(t, "kill", "o1", idempotency.Succeeded), faults.Drop},
		{"the killed attempt's resend", http.MethodPut, path, keyPut(t, "kill", "o1", idempotency.Succeeded), faults.Drop},
		{"the take-over's completion", http.MethodPut, path, keyPut(t, "kill", "o2", idempotency.Succeeded), -1},
		{"a failed completion aimed at: lose its answer", http.MethodPut, path, keyPut(t, "lose", "o3", idempotency.Failed), faults.LostAnswer},
		{"its resend", http.MethodPut, path, keyPut(t, "lose", "o3", idempotency.Failed), -1},
	}
	for _, s := range steps {
		if got := k.Pick(1, s.method, s.path, s.body); got != s.want {
			t.Errorf("%s: %v, want %v", s.name, got, s.want)
		}
	}
	if kills != 1 {
		t.Errorf("%d kills, want 1", kills)
	}
	if c := k.Counts(); c.Kills != 1 || c.LostAnswers != 1 || c.Missed != 0 {
		t.Errorf("counts %+v", c)
	}
}

func TestKeyFaultsMissAKillThatCannotHappen(t *testing.T) {
	subs := []orderstream.Submission{{Key: "early", Copies: 1}, {Key: "failing", Copies: 1}, {Key: "never", Copies: 1}}
	k := newKeyFaults("idempotency-keys", subs, 3, 0)
	path := keyDocs + "rec"
	if f := k.Pick(1, http.MethodPut, path, keyPut(t, "early", "o1", idempotency.Succeeded)); f != -1 {
		t.Errorf("a kill before the handler runs: %v, want the completion left alone", f)
	}
	k.setKill(func(int) error { return errors.New("no handler process is running") })
	if f := k.Pick(1, http.MethodPut, path, keyPut(t, "failing", "o2", idempotency.Succeeded)); f != -1 {
		t.Errorf("a kill that failed: %v, want the completion left alone", f)
	}
	c := k.Counts()
	if c.Kills != 0 || c.Missed != 3 || len(c.Skipped) != 2 || !strings.Contains(c.Skipped[1], "no handler process") {
		t.Errorf("counts %+v, want no kill, 3 missed (one never completed), 2 with their reason", c)
	}
}

func TestKeyFaultChecks(t *testing.T) {
	in, fresh, replay, unavailable := Answer{Status: 409, ProblemType: "#request-in-progress"}, Answer{Status: 201}, Answer{Status: 201, Replayed: true}, Answer{Status: 503}
	taken := Answer{Status: 409, ProblemType: "https://example.test#order-id-taken"}
	gone := Answer{}
	tests := []struct {
		name    string
		fault   keyFault
		answers []Answer
		bad     bool
	}{
		{"killed: 500, 409s, the take-over's 201", keyKill, []Answer{{Status: 500}, in, in, fresh}, false},
		{"killed: 409s, the take-over's 409 order-id-taken", keyKill, []Answer{gone, in, taken}, false},
		{"killed: never told 409", keyKill, []Answer{gone, fresh}, true},
		{"killed: the taker's answer lost, then its replay", keyKill, []Answer{gone, in, unavailable, {Status: 500}, replay}, false},
		{"killed: the work ran twice", keyKill, []Answer{gone, in, fresh, fresh}, true},
		{"killed: still 409 at the end", keyKill, []Answer{gone, in, fresh, in}, true},
		{"lost: 503, then the replay", keyLostAnswer, []Answer{unavailable, replay}, false},
		{"lost: the work ran twice", keyLostAnswer, []Answer{unavailable, fresh}, true},
		{"lost: no final answer at the end", keyLostAnswer, []Answer{replay, unavailable}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k := newKeyFaults("idempotency-keys", nil, 0, 0)
			k.done["K"] = tt.fault
			answers := []Answer{{Key: "other", Status: 500}}
			for _, a := range tt.answers {
				a.Key = "K"
				answers = append(answers, a)
			}
			answers = append(answers, Answer{Key: "K", Reuse: true, Status: 422})
			var checked, violations int
			for _, c := range k.Checks(answers) {
				checked += c.Checked
				violations += len(c.Violations)
			}
			if checked != 1 || (violations > 0) != tt.bad {
				t.Errorf("%d checked, %d violations; want 1 checked and a violation %v", checked, violations, tt.bad)
			}
		})
	}
}

// Kills keep gap completions apart: a kill aimed at a completion that comes
// too soon after the last goes to the next eligible key's completion.
func TestKeyFaultsSpaceKills(t *testing.T) {
	subs := []orderstream.Submission{{Key: "a", Copies: 1}, {Key: "b", Copies: 1}, {Key: "c", Copies: 1}, {Key: "d", Copies: 3}}
	k := newKeyFaults("idempotency-keys", subs, 2, 0)
	k.target = map[string]keyFault{"a": keyKill, "b": keyKill}
	k.gap = 3
	kills := 0
	k.setKill(func(int) error { kills++; return nil })
	path := keyDocs + "rec"
	steps := []struct {
		key  string
		want faults.Fault
	}{
		{"a", faults.Drop},
		{"b", -1},          // too soon: deferred
		{"d", -1},          // sent at once: never aimed at
		{"c", faults.Drop}, // the deferred kill, 3 completions on
		{"a", -1},          // a take-over's completion
	}
	for i, s := range steps {
		if got := k.Pick(1, http.MethodPut, path, keyPut(t, s.key, fmt.Sprint("owner", i), idempotency.Succeeded)); got != s.want {
			t.Errorf("step %d, key %s: %v, want %v", i, s.key, got, s.want)
		}
	}
	if c := k.Counts(); kills != 2 || c.Kills != 2 || c.Missed != 0 {
		t.Errorf("%d kills, counts %+v; want 2 kills, none missed", kills, c)
	}
}
