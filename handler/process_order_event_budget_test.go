package handler

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ordersink/orders-consumer/internal/hostjson"
	"github.com/ordersink/orders-consumer/orders"
)

// orderWithArray is the example order whose first line carries an unknown
// member: an array of k zeros, which the event copies and the host indents
// to a line of its own per element.
func orderWithArray(id string, k int) []byte {
	zeros := strings.TrimSuffix(strings.Repeat("0,", k), ",")
	return []byte(strings.Replace(strings.Replace(exampleBody, "ORD-2026-000123", id, 1),
		`"unitPrice":"19.99"`, `"unitPrice":"19.99","x":[`+zeros+`]`, 1))
}

// acceptedEvent is the OrderAccepted event of body as the processor checks
// it against the budget and stores it (orders.AcceptanceBatch.Event).
func acceptedEvent(t *testing.T, body []byte, messageID string) json.RawMessage {
	t.Helper()
	o, err := orders.ParseOrder(body)
	if err != nil {
		t.Fatal(err)
	}
	b, err := o.AcceptanceDocuments(orders.Acceptance{MessageID: messageID, AcceptedAt: fixedNow()})
	if err != nil {
		t.Fatal(err)
	}
	return b.Event
}

// eventSize is the OrderAccepted event of body as the host would send it.
func eventSize(t *testing.T, body []byte, messageID string) int {
	t.Helper()
	n, err := hostjson.Size(acceptedEvent(t, body, messageID))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestOrderWhoseEventWouldNotFitIsRefused(t *testing.T) {
	const maxMessage = 32 << 10
	budget := maxMessage - headerAllowance
	s := budgetServer(t, Config{MaxMessageBytes: maxMessage})
	base := fmt.Sprintf("ORD-EVENT-%d", time.Now().UnixNano())
	// The largest array whose event fits; every id has the same length.
	k := (budget - eventSize(t, orderWithArray(base+"-a", 0), base+"-a")) / 11
	for eventSize(t, orderWithArray(base+"-a", k), base+"-a") > budget {
		k--
	}
	for eventSize(t, orderWithArray(base+"-a", k+1), base+"-a") <= budget {
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
			body := orderWithArray(tc.id, tc.k)
			t.Logf("body %d bytes, event %d bytes as sent, budget %d", len(body), eventSize(t, body, tc.id), budget)
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
	body := orderWithArray(id, 2000)
	size := eventSize(t, body, id)
	wide := budgetServer(t, Config{})
	narrow := budgetServer(t, Config{MaxMessageBytes: size + headerAllowance - 1})

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
	a := narrow.invoke(t, hostInvocation(orderWithArray(newID, 2000), newID, 1))
	if e := a.parked(t); e == nil || e.Reason != orders.ValidationFailed || !strings.Contains(e.Description, "OrderAccepted event would be") {
		t.Errorf("a new order of that size: %s; want it parked as ValidationFailed", describe(e))
	}
}
