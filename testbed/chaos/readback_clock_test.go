package chaos

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ordersink/orders-consumer/internal/pipetest"
	"github.com/ordersink/orders-consumer/testbed/orderstream"
)

// The read-back depends on the product's promises, not on how fast the
// store answers: a GET that takes longer than a second is waited for, an
// order its owner cannot read does not use up the patience of the next,
// and a GET answered 503 to the end (the store missed SUBMIT_DEADLINE) is
// named, not checked. On virtual time.
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
			default: // the store never answers within the handler's deadline
				w.Header().Set("Retry-After", "1")
				w.WriteHeader(http.StatusServiceUnavailable)
			}
		}))
		l := created("W", 3)
		l.ReadBack(context.Background(), base, keys, 3, 2*time.Second, time.Minute)
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
		base := serveReadBack(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusServiceUnavailable)
		}))
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
