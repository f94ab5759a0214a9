package chaos

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ordersink/orders-consumer/testbed/orderstream"
)

func TestReadBackCheck(t *testing.T) {
	stored := map[string]*apiOrder{"W-1": {orders: 1, requestHash: "sha256:aa"}, "W-2": {orders: 1, requestHash: "sha256:bb"}}
	const notFound = "https://example.test/docs/http-api.md#order-not-found"
	tests := []struct {
		name string
		view orderView
		want string // in the violation; "" none
	}{
		{"the owner reads the stored fingerprint", orderView{OrderID: "W-1", Owner: true, Status: 200, RequestHash: "sha256:aa"}, ""},
		{"another client is told 404", orderView{OrderID: "W-1", Status: 404, ProblemType: notFound}, ""},
		{"another fingerprint", orderView{OrderID: "W-1", Owner: true, Status: 200, RequestHash: "sha256:bb"}, "the stored order's is sha256:aa"},
		{"another client reads it", orderView{OrderID: "W-2", Client: "partner-b", Status: 200, RequestHash: "sha256:bb"}, "does not own it"},
		{"the owner is told 404", orderView{OrderID: "W-2", Owner: true, Status: 404, ProblemType: notFound}, "404"},
		{"no answer", orderView{OrderID: "W-2", Owner: true, Err: "connection refused"}, "connection refused"},
		{"answered but not stored", orderView{OrderID: "W-3", Owner: true, Status: 200, RequestHash: "sha256:cc"}, "no order document"},
		{"not JSON", orderView{OrderID: "W-1", Owner: true, Status: 200, Err: "answer is not JSON"}, "not JSON"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := readBackCheck([]orderView{tc.view}, stored)
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

// TestReadBackAsOwnerAndAsTheOtherClient: the read-back samples evenly,
// asks as the client the order was answered to and as the other one (each
// with its own function key), asks again after a 503, and leaves refused
// payloads out.
func TestReadBackAsOwnerAndAsTheOtherClient(t *testing.T) {
	var mu sync.Mutex
	asked := map[string]int{}
	keys := map[string]string{orderstream.ClientA: "ka", orderstream.ClientB: "kb"}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := strings.TrimPrefix(r.URL.Path, "/api/orders/")
		key := r.Header.Get("x-functions-key")
		mu.Lock()
		asked[id+" "+key]++
		n := asked[id+" "+key]
		mu.Unlock()
		switch {
		case key == "kb":
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, `{"type":"https://example.test#order-not-found"}`)
		case key != "ka":
			w.WriteHeader(http.StatusUnauthorized)
		case n < 2:
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprint(w, `{"type":"https://example.test#service-unavailable"}`)
		default:
			fmt.Fprintf(w, `{"orderId":%q,"requestHash":"sha256:%s"}`, id, id)
		}
	}))
	defer srv.Close()
	l := NewSubmitLedger(nil)
	for i := range 10 {
		l.book(Answer{Client: orderstream.ClientA, Key: fmt.Sprint("k", i), OrderID: fmt.Sprintf("W-%d", i), Status: 201})
	}
	l.book(Answer{Client: orderstream.ClientA, Key: "k0", OrderID: "W-0", Status: 201, Replayed: true})
	l.book(Answer{Client: orderstream.ClientA, Key: "k10", OrderID: "W-X", Status: 201, Reuse: true}) // refused in a real run; never read back
	l.ReadBack(context.Background(), srv.URL, keys, 5, time.Minute, time.Minute)

	var got []string
	for _, v := range l.Views() {
		got = append(got, fmt.Sprintf("%s %s %d", v.OrderID, v.Client, v.Status))
		if v.Owner && v.RequestHash != "sha256:"+v.OrderID {
			t.Errorf("view %+v", v)
		}
	}
	want := "W-0 partner-a 200,W-0 partner-b 404,W-2 partner-a 200,W-2 partner-b 404,W-4 partner-a 200,W-4 partner-b 404," +
		"W-6 partner-a 200,W-6 partner-b 404,W-8 partner-a 200,W-8 partner-b 404"
	if strings.Join(got, ",") != want {
		t.Errorf("read back %s, want %s", strings.Join(got, ","), want)
	}
	if asked["W-X ka"] != 0 || asked["W-0 ka"] != 2 {
		t.Errorf("asked %v: want W-0 twice as its owner (after a 503) and W-X never", asked)
	}
}

func TestReadBackGivesUpAtItsPatience(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := serveReadBack(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusServiceUnavailable)
		}))
		l := NewSubmitLedger(nil)
		l.book(Answer{Client: orderstream.ClientA, Key: "k", OrderID: "W-1", Status: 201})
		const patience = 200 * time.Millisecond
		start := time.Now()
		l.ReadBack(context.Background(), base, nil, 5, patience, time.Minute)
		// Each of the two reads asks until its patience runs out.
		if took := time.Since(start); took != 2*patience {
			t.Errorf("took %s, want the patience of two reads (%s)", took, 2*patience)
		}
		c := readBackCheck(l.Views(), map[string]*apiOrder{"W-1": {orders: 1, requestHash: "sha256:aa"}})
		if c.Checked != 0 || len(c.Violations) != 0 || !strings.Contains(c.Name, "2 not checked: answered 503") {
			t.Errorf("check %q: checked %d, violations %q; want both reads, still 503, named and not checked", c.Name, c.Checked, c.Violations)
		}
	})
}
