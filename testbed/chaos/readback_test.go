package chaos

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ordersink/orders-consumer/internal/pipetest"
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

// The read-back samples evenly, asks as the client the order was answered
// to and as the other one (each with its own function key), asks again
// after a 503, and leaves refused payloads out.
func TestReadBackAsOwnerAndAsTheOtherClient(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		asked := map[string]int{}
		keys := map[string]string{orderstream.ClientA: "ka", orderstream.ClientB: "kb"}
		base := serveReadBack(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
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
		l := created("W", 10)
		l.book(Answer{Client: orderstream.ClientA, Key: "k0", OrderID: "W-0", Status: 201, Replayed: true})
		l.book(Answer{Client: orderstream.ClientA, Key: "k10", OrderID: "W-X", Status: 201, Reuse: true}) // refused in a real run; never read back
		l.ReadBack(context.Background(), base, keys, 5, time.Minute, time.Minute)

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
		mu.Lock()
		defer mu.Unlock()
		if asked["W-X ka"] != 0 || asked["W-0 ka"] != 2 {
			t.Errorf("asked %v: want W-0 twice as its owner (after a 503) and W-X never", asked)
		}
	})
}

// The read-back depends on the product's promises, not on how fast the
// store answers: a GET that takes longer than a second is waited for, an
// order its owner cannot read does not use up the patience of the next,
// and a GET answered 503 to the end (the store missed SUBMIT_DEADLINE) is
// given up at its patience and named, not checked. On virtual time.
func TestReadBackWaitsForTheHandlersDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		keys := map[string]string{orderstream.ClientA: "key-a", orderstream.ClientB: "key-b"}
		base := serveReadBack(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			id := strings.TrimPrefix(r.URL.Path, "/api/orders/")
			notFound := func() {
				w.WriteHeader(http.StatusNotFound)
				fmt.Fprint(w, `{"type":"https://example.test/docs/http-api.md#order-not-found"}`)
			}
			switch {
			case r.Header.Get("x-functions-key") != keys[orderstream.ClientA]:
				notFound() // not the owner
			case id == "W-0": // the owner cannot read its own order: a violation
				notFound()
			case id == "W-1": // a loaded store: 1.5 s per answer
				time.Sleep(1500 * time.Millisecond)
				fmt.Fprintf(w, `{"orderId":%q,"requestHash":"sha256:aa"}`, id)
			default:
				unavailable(w, r)
			}
		}))
		l := created("W", 3)
		const patience = 2 * time.Second
		start := time.Now()
		l.ReadBack(context.Background(), base, keys, 3, patience, time.Minute)
		// The slow answer is waited for; a read answered 503 asks until its
		// patience runs out, and the next read starts then.
		if took := time.Since(start); took != 1500*time.Millisecond+patience {
			t.Errorf("took %s, want the slow answer's 1.5 s and one read's patience (%s)", took, patience)
		}
		views := l.Views()
		if len(views) != 6 {
			t.Fatalf("views %+v, want 6 (3 orders, each as its owner and as the other client)", views)
		}
		if v := views[2]; v.OrderID != "W-1" || !v.Owner || v.Status != http.StatusOK {
			t.Errorf("the slow GET by the owner: %+v, want 200 after 1.5 s", v)
		}
		stored := map[string]*apiOrder{"W-0": {orders: 1, requestHash: "sha256:bb"}, "W-1": {orders: 1, requestHash: "sha256:aa"}, "W-2": {orders: 1, requestHash: "sha256:cc"}}
		c := readBackCheck(views, stored)
		if c.Checked != 5 || len(c.Violations) != 1 || !strings.Contains(c.Violations[0], "W-0") {
			t.Errorf("checked %d, violations %q: want W-0 refused to its owner, the rest right, W-2's owner not checked", c.Checked, c.Violations)
		}
		if !strings.Contains(c.Name, "1 not checked: answered 503") {
			t.Errorf("check %q does not name the GET answered 503", c.Name)
		}
	})
}

// A store that answers 503 to every GET cannot stretch the read-back past
// its budget (otherwise 40 reads of a minute each): the reads left undone
// are named, not checked, and none fails the run. On virtual time: it ends
// at its budget exactly.
func TestReadBackEndsWithItsBudget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := serveReadBack(t, unavailable)
		l := created("B", 3)
		const patience, budget = time.Second, 1500 * time.Millisecond
		start := time.Now()
		l.ReadBack(context.Background(), base, nil, 3, patience, budget)
		// Without the budget: 6 reads of a second each.
		if took := time.Since(start); took != budget {
			t.Errorf("the read-back took %s, want its budget %s", took, budget)
		}
		views := l.Views()
		if len(views) != 6 {
			t.Fatalf("views %+v, want 6 (3 orders, each as its owner and as the other client)", views)
		}
		undone := 0
		for _, v := range views {
			if v.Undone {
				undone++
			}
		}
		if undone < 4 {
			t.Errorf("%d reads undone, want at least 4 of 6 (the budget covers one and a half reads): %+v", undone, views)
		}
		c := readBackCheck(views, nil)
		if len(c.Violations) != 0 || c.Checked != 0 {
			t.Errorf("checked %d, violations %q: want nothing checked", c.Checked, c.Violations)
		}
		if !strings.Contains(c.Name, fmt.Sprintf("%d not read: the read-back's time ran out", undone)) {
			t.Errorf("check %q does not name the %d reads left undone", c.Name, undone)
		}
	})
}

// created is a ledger of n orders <prefix>-0… answered 201 to client A.
func created(prefix string, n int) *SubmitLedger {
	l := NewSubmitLedger(nil)
	for i := range n {
		l.book(Answer{Key: fmt.Sprint("k", i), OrderID: fmt.Sprintf("%s-%d", prefix, i), Client: orderstream.ClientA, Status: http.StatusCreated})
	}
	return l
}

// unavailable answers every GET 503: the store never answers within the
// handler's deadline.
var unavailable = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Retry-After", "1")
	w.WriteHeader(http.StatusServiceUnavailable)
})

// serveReadBack serves h on a network in memory for a test in a synctest
// bubble, and points the read-back at it; it returns the base URL.
func serveReadBack(t *testing.T, h http.Handler) string {
	t.Helper()
	n := &pipetest.Network{}
	t.Cleanup(n.Drain)
	readBackTransport = n.Transport()
	t.Cleanup(func() { readBackTransport = nil })
	return n.Serve(t, "127.0.0.1:7071", h)
}
