package orders_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/ordersink/orders-consumer/orders"
	"github.com/ordersink/orders-consumer/orders/orderstest"
)

// Admit refuses exactly what Process refuses before writing, with the same
// reason and description, so SubmitOrder and the queue judge alike.
func TestAdmitJudgesAsProcess(t *testing.T) {
	tooBig := errors.New("too big")
	p := &orders.Processor{Store: orderstest.NewMemStore(), EventBudget: func(e json.RawMessage) error {
		if strings.Contains(string(e), "HUGE") {
			return tooBig
		}
		return nil
	}}
	example := orderstest.ExampleBody
	for _, tc := range []struct {
		name, body string
		reason     orders.Reason // "" when admitted
	}{
		{"the example", example, ""},
		{"not JSON", `{"orderId":`, orders.MalformedMessage},
		{"a rule broken", strings.Replace(example, `"EUR"`, `"eur"`, 1), orders.ValidationFailed},
		{"a reserved name", strings.Replace(example, `"total"`, `"ttl":1,"total"`, 1), orders.ValidationFailed},
		{"an event over budget", strings.Replace(example, `"SKU-1"`, `"SKU-1-HUGE"`, 1), orders.ValidationFailed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := []byte(strings.Replace(tc.body, orderstest.ExampleOrderID, "ORD-ADMIT-"+strings.ReplaceAll(tc.name, " ", "-"), 1))
			o, _, err := p.Admit(body)
			var re *orders.RejectError
			if tc.reason == "" {
				if err != nil || o == nil || o.ID == "" {
					t.Fatalf("Admit: %v, %v", o, err)
				}
			} else if !errors.As(err, &re) || re.Reason != tc.reason {
				t.Fatalf("Admit: %v, want a %s RejectError", err, tc.reason)
			}
			r := p.Process(context.Background(), orders.Message{Body: body, DeliveryCount: 1})
			if tc.reason == "" {
				if r.Outcome != orders.Created {
					t.Errorf("Process: %s, Admit admitted it", r.Outcome)
				}
				return
			}
			if r.Outcome != orders.Invalid || r.Reason != tc.reason || r.Description != re.Error() {
				t.Errorf("Process: %s %s %q; Admit: %s %q", r.Outcome, r.Reason, r.Description, re.Reason, re.Error())
			}
		})
	}
}
