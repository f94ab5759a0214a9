package chaos

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestReadBackCheck(t *testing.T) {
	stored := map[string]string{"W-1": "sha256:aa", "W-2": "sha256:bb"}
	tests := []struct {
		name string
		view OrderView
		want string // in the violation; "" none
	}{
		{"accepted with the stored fingerprint", OrderView{OrderID: "W-1", Status: 200, State: "accepted", RequestHash: "sha256:aa"}, ""},
		{"another fingerprint", OrderView{OrderID: "W-1", Status: 200, State: "accepted", RequestHash: "sha256:bb"}, "the stored order's is sha256:aa"},
		{"still submitted", OrderView{OrderID: "W-2", Status: 200, State: "submitted", RequestHash: "sha256:bb"}, `state "submitted"`},
		{"not found", OrderView{OrderID: "W-2", Status: 404}, "404"},
		{"no answer", OrderView{OrderID: "W-2", Err: "connection refused"}, "connection refused"},
		{"accepted but not stored", OrderView{OrderID: "W-3", Status: 200, State: "accepted", RequestHash: "sha256:cc"}, "no order document"},
		{"not an order view", OrderView{OrderID: "W-1", Status: 200, Err: "answer is not an order view"}, "not an order view"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := ReadBackCheck([]OrderView{tc.view}, stored)
			if c.Checked != 1 {
				t.Errorf("checked %d, want 1", c.Checked)
			}
			got := strings.Join(c.Violations, "; ")
			if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
				t.Errorf("violations %q, want %q", got, tc.want)
			}
		})
	}
}

// TestReadBackFollowsTheOrderUntilAccepted: GetOrder answers `submitted`
// until the consumer stored the order; the read-back asks again, samples
// evenly, sends the function key and leaves refused payloads out.
func TestReadBackFollowsTheOrderUntilAccepted(t *testing.T) {
	var mu sync.Mutex
	asked := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := strings.TrimPrefix(r.URL.Path, "/api/orders/")
		mu.Lock()
		asked[id]++
		n := asked[id]
		mu.Unlock()
		if r.Header.Get("x-functions-key") != "k" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		state := "submitted"
		if n >= 3 {
			state = "accepted"
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"orderId":%q,"state":%q,"requestHash":"sha256:%s","conflicts":[]}`, id, state, id)
	}))
	defer srv.Close()
	l := NewSubmitLedger(nil)
	for i := range 10 {
		l.book(Answer{Key: fmt.Sprint("k", i), OrderID: fmt.Sprintf("W-%d", i), Status: 202})
	}
	l.book(Answer{Key: "k0", OrderID: "W-0", Status: 202, Replayed: true})
	l.book(Answer{Key: "k10", OrderID: "W-X", Status: 202, Reuse: true}) // refused in a real run; never read back
	l.ReadBack(context.Background(), srv.URL, SubmitConfig{FunctionKey: "k"}, 5, time.Minute)

	views := l.Views()
	var ids []string
	for _, v := range views {
		ids = append(ids, v.OrderID)
		if v.State != "accepted" || v.RequestHash != "sha256:"+v.OrderID {
			t.Errorf("view %+v, want accepted", v)
		}
	}
	if got, want := strings.Join(ids, ","), "W-0,W-2,W-4,W-6,W-8"; got != want {
		t.Errorf("read back %s, want %s", got, want)
	}
	if asked["W-X"] != 0 || asked["W-0"] != 3 {
		t.Errorf("asked %v: want W-0 three times and W-X never", asked)
	}
}

func TestReadBackGivesUpAtItsPatience(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"state":"submitted"}`)
	}))
	defer srv.Close()
	l := NewSubmitLedger(nil)
	l.book(Answer{Key: "k", OrderID: "W-1", Status: 202})
	start := time.Now()
	l.ReadBack(context.Background(), srv.URL, SubmitConfig{}, 5, 200*time.Millisecond)
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("took %s", took)
	}
	if c := ReadBackCheck(l.Views(), map[string]string{"W-1": "sha256:aa"}); len(c.Violations) != 1 {
		t.Errorf("violations %q, want the order still submitted", c.Violations)
	}
}
