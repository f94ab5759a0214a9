package handler

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ordersink/orders-consumer/handler/handlertest"
	"github.com/ordersink/orders-consumer/orders"
)

func TestOrderWhoseEventWouldNotFitIsRefused(t *testing.T) {
	const maxMessage = 32 << 10
	budget := maxMessage - HeaderAllowance
	s := budgetServer(t, Config{MaxMessageBytes: maxMessage})
	base := fmt.Sprintf("ORD-EVENT-%d", time.Now().UnixNano())
	// The largest array whose event fits; every id has the same length.
	k := (budget - handlertest.EventSize(t, handlertest.OrderWithArray(base+"-a", 0), base+"-a")) / 11
	for handlertest.EventSize(t, handlertest.OrderWithArray(base+"-a", k), base+"-a") > budget {
		k--
	}
	for handlertest.EventSize(t, handlertest.OrderWithArray(base+"-a", k+1), base+"-a") <= budget {
		k++
	}
	for _, tc := range []struct {
		name    string
		id      string
		k       int
		created bool
	}{
		{"at the limit", base + "-a", k, true},
		{"one element over", base + "-b", k + 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := handlertest.OrderWithArray(tc.id, tc.k)
			t.Logf("body %d bytes, event %d bytes as sent, budget %d", len(body), handlertest.EventSize(t, body, tc.id), budget)
			a := s.invoke(t, hostInvocation(body, tc.id, 1))
			e := a.parked(t)
			if tc.created {
				if a.Status != http.StatusOK || e != nil || a.Outcome() != "created" {
					t.Fatalf("status %d, %s", a.Status, describe(e))
				}
				return
			}
			if a.Status != http.StatusOK || e == nil || e.Reason != orders.ValidationFailed || !strings.Contains(e.Description, "OrderAccepted event would be") {
				t.Fatalf("status %d, %s", a.Status, describe(e))
			}
			if docs := partition(t, tc.id); len(docs) != 0 {
				t.Errorf("a refused order wrote %d documents", len(docs))
			}
		})
	}
}

// A resend of an accepted order is judged by its key, the orderId, first
// (docs/adr/0015-the-key-first.md): with the limit lowered below its event it
// is still a duplicate, not parked as ValidationFailed, and the stored order
// and event stay as they were; a new order of that size is refused.
func TestResendWhoseEventNoLongerFitsIsADuplicate(t *testing.T) {
	id := fmt.Sprintf("ORD-EVENT-RESEND-%d", time.Now().UnixNano())
	body := handlertest.OrderWithArray(id, 2000)
	size := handlertest.EventSize(t, body, id)
	wide := budgetServer(t, Config{})
	narrow := budgetServer(t, Config{MaxMessageBytes: size + HeaderAllowance - 1})

	if a := wide.invoke(t, hostInvocation(body, id, 1)); a.Status != http.StatusOK || a.Outcome() != "created" {
		t.Fatalf("first delivery: status %d, %v", a.Status, a.Logs)
	}
	before := partition(t, id)
	for delivery, s := range []*testServer{wide, narrow} {
		a := s.invoke(t, hostInvocation(body, id, delivery+2))
		if a.Status != http.StatusOK || a.Outcome() != "duplicate" || a.parked(t) != nil {
			t.Errorf("resend %d (event %d bytes): status %d, %v, parked %s; want a duplicate", delivery+2, size, a.Status, a.Logs, describe(a.parked(t)))
		}
	}
	if after := partition(t, id); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("the resend changed the partition:\n%v\nwas\n%v", after, before)
	}
	newID := id + "-NEW"
	a := narrow.invoke(t, hostInvocation(handlertest.OrderWithArray(newID, 2000), newID, 1))
	if e := a.parked(t); e == nil || e.Reason != orders.ValidationFailed || !strings.Contains(e.Description, "OrderAccepted event would be") {
		t.Errorf("a new order of that size: %s; want it parked as ValidationFailed", describe(e))
	}
}
