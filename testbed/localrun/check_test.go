package localrun

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ordersink/orders-consumer/testbed/chaos"
	"github.com/ordersink/orders-consumer/testbed/hostemu"
	"github.com/ordersink/orders-consumer/testbed/orderstream"
)

const (
	bodyA  = `{"orderId":"A","customerId":"C","currency":"EUR","lines":[{"sku":"S","quantity":1,"unitPrice":"1.00"}],"total":"1.00","placedAt":"2026-11-29T10:00:00Z"}`
	bodyA2 = `{"orderId":"A","customerId":"C","currency":"EUR","lines":[{"sku":"S","quantity":2,"unitPrice":"1.00"}],"total":"2.00","placedAt":"2026-11-29T10:00:00Z"}`
	bodyX  = `{"orderId":"X","lines":[`
)

func parked(reason, body string) hostemu.OutputMessage {
	b, _ := json.MarshalIndent(map[string]any{"reason": reason, "body": body}, "", "  ")
	return hostemu.OutputMessage{Binding: "parking", Type: "serviceBus", Entity: "orders-deadletter", ContentType: "text/plain", Text: string(b)}
}

func invocation(outputs []hostemu.OutputMessage, msgs ...*hostemu.Message) *hostemu.Invocation {
	inv := &hostemu.Invocation{ID: "inv", Function: "F", Outputs: outputs}
	for _, m := range msgs {
		inv.Deliveries = append(inv.Deliveries, hostemu.Delivery{Message: m, DeliveryCount: 1})
		inv.Settlements = append(inv.Settlements, hostemu.Completed)
	}
	return inv
}

// The check must hold whichever content won the create: here the mutated
// copy (A2) was stored first, so the original's deliveries are the ones that
// must be parked.
func TestCheckIsExactWhicheverContentWins(t *testing.T) {
	a, a2, x := &hostemu.Message{Body: []byte(bodyA)}, &hostemu.Message{Body: []byte(bodyA2)}, &hostemu.Message{Body: []byte(bodyX)}
	storedA2 := []storedOrder{{ID: "A", OrderID: "A", RequestHash: orderstream.ContentKey([]byte(bodyA2))}}
	msgs := []*hostemu.Message{a, a2, x}
	tests := []struct {
		name    string
		invs    []*hostemu.Invocation
		stored  []storedOrder
		problem string // "" = the check holds
	}{
		{"mutated copy won, original parked", []*hostemu.Invocation{
			invocation(nil, a2),
			invocation([]hostemu.OutputMessage{parked("HashMismatch", bodyA)}, a),
			invocation([]hostemu.OutputMessage{parked("MalformedMessage", bodyX)}, x),
		}, storedA2, ""},
		{"one batch with the winner, two copies of the loser and the invalid one", []*hostemu.Invocation{
			invocation([]hostemu.OutputMessage{parked("HashMismatch", bodyA), parked("HashMismatch", bodyA), parked("MalformedMessage", bodyX)}, a2, a, a, x),
		}, storedA2, ""},
		{"a loser's delivery not parked", []*hostemu.Invocation{
			invocation([]hostemu.OutputMessage{parked("HashMismatch", bodyA), parked("MalformedMessage", bodyX)}, a2, a, a, x),
		}, storedA2, "want 2 HashMismatch"},
		{"the winner parked", []*hostemu.Invocation{
			invocation([]hostemu.OutputMessage{parked("HashMismatch", bodyA2)}, a2),
			invocation([]hostemu.OutputMessage{parked("HashMismatch", bodyA)}, a),
			invocation([]hostemu.OutputMessage{parked("MalformedMessage", bodyX)}, x),
		}, storedA2, "delivery of the stored content was parked"},
		{"an envelope for a body the invocation did not carry", []*hostemu.Invocation{
			invocation([]hostemu.OutputMessage{parked("HashMismatch", bodyA)}, a2),
			invocation([]hostemu.OutputMessage{parked("HashMismatch", bodyA)}, a),
			invocation([]hostemu.OutputMessage{parked("MalformedMessage", bodyX)}, x),
		}, storedA2, "a body it was not given"},
		{"nothing stored", []*hostemu.Invocation{
			invocation(nil, a2), invocation(nil, a),
			invocation([]hostemu.OutputMessage{parked("MalformedMessage", bodyX)}, x),
		}, nil, "not stored"},
		{"the loser never delivered successfully", []*hostemu.Invocation{
			invocation(nil, a2),
			invocation([]hostemu.OutputMessage{parked("MalformedMessage", bodyX)}, x),
		}, storedA2, "never processed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &Report{ParkingQueue: "orders-deadletter"}
			r.check(msgs, tt.invs, tt.stored, nil)
			got := strings.Join(r.Problems, "\n")
			switch {
			case tt.problem == "" && !r.OK():
				t.Errorf("check failed:\n%s", got)
			case tt.problem != "" && (r.OK() || !strings.Contains(got, tt.problem)):
				t.Errorf("problems %q, want one containing %q", got, tt.problem)
			}
		})
	}
}

// make run judges the incident rules with make chaos's checks: a batch that
// parked a valid order RetryBudgetExhausted fails the run and says which.
func TestIncidentChecksInTheSummary(t *testing.T) {
	a, x := &hostemu.Message{MessageID: "A", Body: []byte(bodyA)}, &hostemu.Message{MessageID: "X", Body: []byte(bodyX)}
	msgs := []*hostemu.Message{a, x}
	invs := []*hostemu.Invocation{invocation([]hostemu.OutputMessage{parked("MalformedMessage", bodyX), parked("RetryBudgetExhausted", bodyA)}, x, a)}
	r := &Report{ParkingQueue: "orders-deadletter"}
	r.checkIncidents(msgs, invs, &chaos.RigResult{})
	var out strings.Builder
	r.Print(&out)
	if r.OK() || !strings.Contains(out.String(), "no valid order parked RetryBudgetExhausted or dead-lettered") ||
		!strings.Contains(out.String(), "valid message A (order A) was parked RetryBudgetExhausted") {
		t.Errorf("ok=%v, summary:\n%s\nwant the exhausted valid order A named and the run failed", r.OK(), out.String())
	}
	r.checkIncidents(msgs, invs[:0], &chaos.RigResult{})
	if !r.OK() {
		t.Errorf("no invocation parked anything, yet the incident checks failed")
	}
}
