package handler

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ordersink/orders-consumer/handler/handlertest"
	"github.com/ordersink/orders-consumer/orders"
	"github.com/ordersink/orders-consumer/orders/orderstest"
)

// orderWithNulls is the example order whose first line carries k nulls and
// a string of pad bytes: an event that grows by a line per null (its size
// mostly indentation, which the host adds) and by one byte per pad byte.
func orderWithNulls(id string, k, pad int) []byte {
	nulls := strings.TrimSuffix(strings.Repeat("null,", k), ",")
	return []byte(strings.Replace(strings.Replace(orderstest.ExampleBody, "ORD-2026-000123", id, 1),
		`"unitPrice":"19.99"`, `"unitPrice":"19.99","x":[`+nulls+`],"pad":"`+strings.Repeat("p", pad)+`"`, 1))
}

// newtonsoftSize is the size of the OrderAccepted event of body as the host
// sends it, computed without internal/hostjson: Newtonsoft's indented form
// lays values out as encoding/json's Indent with two spaces does (a line per
// value, "name": value, empty containers as [] and {}), and this event holds
// nothing the host re-prints otherwise (its dates are already in the form
// Newtonsoft writes, it has no number with a fraction or an exponent).
func newtonsoftSize(t *testing.T, body []byte, messageID string) int {
	t.Helper()
	var out bytes.Buffer
	if err := json.Indent(&out, handlertest.AcceptedEvent(t, body, messageID), "", "  "); err != nil {
		t.Fatal(err)
	}
	return out.Len()
}

// TestEventBudgetIsTheHostsIndentation: the size budget counts an output as
// the host sends it, two spaces per level of indentation as Newtonsoft
// writes them, to the byte. An order whose event is exactly the budget is
// created; one whose event is one byte over is refused, its size named, even
// though its compact event is a third of the budget: the one-pass bound
// that lets most outputs through without re-serialising them
// (docs/adr/0009-output-size-budgets.md) must not let it through either.
func TestEventBudgetIsTheHostsIndentation(t *testing.T) {
	const maxMessage = 32 << 10
	budget := maxMessage - HeaderAllowance
	s := budgetServer(t, Config{MaxMessageBytes: maxMessage})
	base := fmt.Sprintf("ORD-LAYOUT-%d", time.Now().UnixNano())
	at, over := base+"-a", base+"-b"
	perNull := newtonsoftSize(t, orderWithNulls(at, 2, 0), at) - newtonsoftSize(t, orderWithNulls(at, 1, 0), at)
	k := (budget - newtonsoftSize(t, orderWithNulls(at, 1, 0), at)) / perNull
	for newtonsoftSize(t, orderWithNulls(at, k, 0), at) > budget-perNull {
		k--
	}
	pad := budget - newtonsoftSize(t, orderWithNulls(at, k, 0), at)
	for _, tc := range []struct {
		name    string
		id      string
		pad     int
		created bool
	}{
		{"at the budget", at, pad, true},
		{"one byte over", over, pad + 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := orderWithNulls(tc.id, k, tc.pad)
			size := newtonsoftSize(t, body, tc.id)
			if want := budget + map[bool]int{true: 0, false: 1}[tc.created]; size != want {
				t.Fatalf("the test built an event of %d bytes as sent, want %d", size, want)
			}
			a := s.invoke(t, hostInvocation(body, tc.id, 1))
			e := a.parked(t)
			if a.Status != http.StatusOK {
				t.Fatalf("status %d", a.Status)
			}
			if tc.created {
				if e != nil || len(handlertest.DocumentsOfType(partition(t, tc.id), orders.TypeOrder)) != 1 {
					t.Fatalf("an event of exactly the budget (%d bytes as sent): %s; want the order created", size, describe(e))
				}
				return
			}
			want := fmt.Sprintf("OrderAccepted event would be %d bytes", size)
			if e == nil || e.Reason != orders.ValidationFailed || !strings.Contains(e.Description, want) {
				t.Fatalf("an event one byte over the budget (%d bytes as sent, %d in all): %s; want ValidationFailed saying %q",
					size, budget, describe(e), want)
			}
			if docs := partition(t, tc.id); len(docs) != 0 {
				t.Errorf("a refused order wrote %d documents", len(docs))
			}
		})
	}
}
