package verify

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ordersink/orders-consumer/testbed/faults"
	"github.com/ordersink/orders-consumer/testbed/hostemu"
	"github.com/ordersink/orders-consumer/testbed/orderstream"
)

// scenario is the Evidence of a small run: order ORD-1 sent as A, again as
// A with other meta, and as the mismatching B; BAD-1 invalid.
type scenario struct {
	a, a2, b, bad *hostemu.Message
	invs          []*hostemu.Invocation
	docs          map[string][]json.RawMessage
	created       map[string][]string
	queue         hostemu.QueueCounts
	atomic        bool
	outages       []faults.OutageRecord
	createdAt     map[string]time.Time
}

func orderBody(customer, sentAt string) []byte {
	return []byte(fmt.Sprintf(`{"orderId":"ORD-1","customerId":%q,"currency":"EUR","lines":[{"sku":"S","quantity":2,"unitPrice":"1.50"}],`+
		`"total":"3.00","placedAt":"2026-11-29T10:00:00Z","meta":{"sentAt":%q}}`, customer, sentAt))
}

func envelopeText(reason string, m *hostemu.Message, stored string) string {
	b, _ := json.MarshalIndent(map[string]any{"reason": reason, "orderId": "ORD-1", "deliveryCount": 1,
		"storedHash": stored, "incomingHash": orderstream.ContentKey(m.Body), "body": string(m.Body)}, "", "  ")
	return string(b)
}

func invocation(m *hostemu.Message, parkedAs, stored string) *hostemu.Invocation {
	inv := &hostemu.Invocation{ID: "inv-" + m.MessageID + fmt.Sprint(m.SequenceNumber), Function: "ProcessOrder", Status: 200,
		Deliveries: []hostemu.Delivery{{Message: m, DeliveryCount: 1}}, Settlements: []hostemu.Settlement{hostemu.Completed}}
	if parkedAs != "" {
		inv.Outputs = []hostemu.OutputMessage{{Binding: "parking", Type: "serviceBus", Entity: "orders-deadletter",
			ContentType: "text/plain", Text: envelopeText(parkedAs, m, stored)}}
	}
	return inv
}

func raw(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}

func goodScenario() *scenario {
	s := &scenario{
		a:   &hostemu.Message{Body: orderBody("C-1", "10:00:01"), MessageID: "ORD-1", Subject: "OrderPlaced", SequenceNumber: 1},
		a2:  &hostemu.Message{Body: orderBody("C-1", "10:00:09"), MessageID: "ORD-1", SequenceNumber: 2},
		b:   &hostemu.Message{Body: orderBody("C-2", "10:00:05"), MessageID: "ORD-1", SequenceNumber: 3},
		bad: &hostemu.Message{Body: []byte(`{"orderId":"BAD-1",`), MessageID: "BAD-1", SequenceNumber: 4},
	}
	hA, hB := orderstream.ContentKey(s.a.Body), orderstream.ContentKey(s.b.Body)
	s.invs = []*hostemu.Invocation{invocation(s.a, "", ""), invocation(s.a2, "", ""),
		invocation(s.b, "HashMismatch", hA), invocation(s.bad, "MalformedMessage", "")}
	var order map[string]any
	_ = json.Unmarshal(s.a.Body, &order)
	for k, v := range map[string]any{"id": "ORD-1", "type": "order", "requestHash": hA, "hashVersion": 1,
		"messageId": "ORD-1", "acceptedAt": "2026-11-29T10:00:02Z", "_rid": "x", "_ts": 1} {
		order[k] = v
	}
	s.docs = map[string][]json.RawMessage{
		"order":       {raw(order)},
		"outboxEvent": {raw(map[string]any{"id": "ORD-1:event:OrderAccepted", "orderId": "ORD-1", "type": "outboxEvent", "requestHash": hA})},
		"conflict": {raw(map[string]any{"id": "ORD-1:conflict:x", "orderId": "ORD-1", "type": "conflict",
			"storedHash": hA, "incomingHash": hB})},
	}
	s.created = map[string][]string{"ORD-1": {hA}}
	s.queue = hostemu.QueueCounts{Sent: 4, Completed: 4}
	return s
}

func (s *scenario) findings() *Findings {
	msgs := []*hostemu.Message{s.a, s.a2, s.b, s.bad}
	tr := NewTracker(msgs)
	for _, inv := range s.invs {
		tr.Observe(inv)
	}
	return CheckRun(s.docs, Evidence{Messages: msgs, Fates: tr, Queue: s.queue, Created: s.created, Atomic: s.atomic,
		Outages: s.outages, CreatedAt: s.createdAt, RecoveryBound: DefaultRecoveryBound})
}

func TestChecksPassOnAGoodRun(t *testing.T) {
	f := goodScenario().findings()
	for _, c := range f.Checks {
		if len(c.Violations) > 0 || c.Checked == 0 {
			t.Errorf("%s: checked %d, violations %v", c.Name, c.Checked, c.Violations)
		}
	}
	if f.Violations() != 0 {
		t.Errorf("violations %d, want 0", f.Violations())
	}
}

// spoiled is the good scenario spoiled one way, and what the checks must
// find in it.
type spoiled struct {
	name   string
	spoil  func(*scenario)
	checks []string // parts of the names of the checks that must fail, and only they
	says   string   // what one of their violations says ("": anything)
}

// run spoils the scenario and fails t unless exactly the checks named
// found violations (each of them, and no other), one of them saying what
// it must.
func (tt spoiled) run(t *testing.T) (*scenario, *Findings) {
	t.Helper()
	s := goodScenario()
	tt.spoil(s)
	f := s.findings()
	said := tt.says == ""
	for _, c := range f.Checks {
		mine := slices.ContainsFunc(tt.checks, func(n string) bool { return strings.Contains(c.Name, n) })
		if mine != (len(c.Violations) > 0) {
			t.Errorf("%s: violations %q", c.Name, c.Violations)
		}
		said = said || mine && slices.ContainsFunc(c.Violations, func(v string) bool { return strings.Contains(v, tt.says) })
	}
	for _, n := range tt.checks {
		if !slices.ContainsFunc(f.Checks, func(c *Check) bool { return strings.Contains(c.Name, n) && len(c.Violations) > 0 }) {
			t.Errorf("no check named %q found a violation", n)
		}
	}
	if !said {
		t.Errorf("no violation says %q", tt.says)
	}
	return s, f
}

// A client that fell back from the queue to the HTTP API may be served by
// the API first: the order is then stored with its owner and submissionId,
// and the queue's copy, of the same content, is a duplicate (soak seed
// 785711 failed here, on two such orders, before the checks knew it).
func TestChecksPassWhenTheHTTPAPIStoredTheOrderFirst(t *testing.T) {
	spoiled{spoil: func(s *scenario) {
		var order map[string]any
		if err := json.Unmarshal(s.docs["order"][0], &order); err != nil {
			t.Fatal(err)
		}
		order["owner"], order["submissionId"] = "client-a", "4f1c2d3e"
		s.docs["order"][0] = raw(order)
	}}.run(t)
}

// Each way a run can go wrong is caught by the checks that name it, and by
// no other.
func TestChecksCatchEachViolation(t *testing.T) {
	const (
		lost     = "nothing lost"
		oneOrder = "one order per"
		outcome  = "got its outcome"
		outbox   = "no outbox event without"
		conflict = "conflict record"
		stray    = "nothing written"
	)
	for _, tt := range []spoiled{
		{"message never settled", func(s *scenario) { s.invs = s.invs[:1] }, []string{lost}, ""},
		{"queue not drained", func(s *scenario) { s.queue.Outstanding = 1 }, []string{lost}, ""},
		{"two creates accepted", func(s *scenario) { s.created["ORD-1"] = append(s.created["ORD-1"], s.created["ORD-1"][0]) }, []string{oneOrder}, ""},
		{"two order documents", func(s *scenario) { s.docs["order"] = append(s.docs["order"], s.docs["order"][0]) }, []string{oneOrder}, ""},
		{"stored content sent by nobody", func(s *scenario) {
			s.docs["order"][0] = json.RawMessage(strings.Replace(string(s.docs["order"][0]), `"C-1"`, `"C-9"`, 1))
		}, []string{oneOrder, outcome}, ""},
		{"stored hash is not the accepted create's", func(s *scenario) { s.created["ORD-1"] = []string{"sha256:other"} }, []string{oneOrder}, ""},
		{"mismatch accepted silently", func(s *scenario) { s.invs[2] = invocation(s.b, "", "") }, []string{outcome}, ""},
		{"duplicate parked as mismatch", func(s *scenario) { s.invs[1] = invocation(s.a2, "HashMismatch", "x") }, []string{outcome, conflict}, ""},
		{"valid message parked as invalid", func(s *scenario) { s.invs[1] = invocation(s.a2, "ValidationFailed", "") }, []string{outcome}, ""},
		{"invalid message completed", func(s *scenario) { s.invs[3] = invocation(s.bad, "", "") }, []string{outcome}, ""},
		{"order missing though accepted", func(s *scenario) { s.docs["order"] = nil; s.created = nil }, []string{outcome, outbox, conflict}, ""},
		{"outbox event without order", func(s *scenario) {
			s.docs["outboxEvent"] = append(s.docs["outboxEvent"], raw(map[string]any{"id": "ORD-1x:event:OrderAccepted", "orderId": "ORD-1x"}))
		}, []string{outbox, stray}, ""},
		{"outbox event of other content", func(s *scenario) {
			s.docs["outboxEvent"][0] = raw(map[string]any{"id": "ORD-1:event:OrderAccepted", "orderId": "ORD-1", "requestHash": "sha256:b"})
		}, []string{outbox}, ""},
		{"mismatch without conflict record", func(s *scenario) { s.docs["conflict"] = nil }, []string{conflict}, ""},
		{"written for an invalid message", func(s *scenario) {
			s.docs["conflict"] = append(s.docs["conflict"], raw(map[string]any{"id": "BAD-1:conflict:x", "orderId": "BAD-1"}))
		}, []string{stray}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) { tt.run(t) })
	}
}

// On the local emulator a batch is not atomic: an order without its event is
// reported, and counted only when the endpoint's batches are atomic.
func TestOrderWithoutEventCountsOnlyWhereBatchesAreAtomic(t *testing.T) {
	s := goodScenario()
	s.docs["outboxEvent"] = nil
	if f := s.findings(); len(f.OrdersWithoutEvent) != 1 || f.Violations() != 0 {
		t.Errorf("local emulator: orders without event %v, violations %d; want 1 reported, 0 counted", f.OrdersWithoutEvent, f.Violations())
	}
	s.atomic = true
	if f := s.findings(); f.Violations() != 1 {
		t.Errorf("atomic batches: violations %d, want 1", f.Violations())
	}
}

// A message given up on with a reason is accounted for, not lost; but a
// valid order given up on is what an ordinary incident must never cause, so
// that check alone fails, once.
func TestExhaustedAndDeadLetteredAreAccounted(t *testing.T) {
	_, f := spoiled{spoil: func(s *scenario) { s.invs[1] = invocation(s.a2, "RetryBudgetExhausted", "") },
		checks: []string{"no valid order parked"}}.run(t)
	if len(f.Accounted) != 1 || f.Accounted[0].Reason != "RetryBudgetExhausted" || f.Violations() != 1 {
		t.Errorf("accounted %+v, %d violations; want one RetryBudgetExhausted, one violation", f.Accounted, f.Violations())
	}
}

// One batch carrying the stored content twice, the mismatch and the invalid
// message: its envelopes are matched to its messages by content (make run's
// batch function), and a missing or misplaced one is caught.
func TestChecksOfABatch(t *testing.T) {
	batch := func(s *scenario, parkedAs map[*hostemu.Message]string) {
		inv := &hostemu.Invocation{ID: "batch", Function: "ProcessOrderBatch", Status: 200}
		for _, m := range []*hostemu.Message{s.a, s.a2, s.b, s.bad} {
			inv.Deliveries = append(inv.Deliveries, hostemu.Delivery{Message: m, DeliveryCount: 1})
			inv.Settlements = append(inv.Settlements, hostemu.Completed)
			if reason := parkedAs[m]; reason != "" {
				inv.Outputs = append(inv.Outputs, hostemu.OutputMessage{Binding: "parking", Type: "serviceBus",
					Entity: "orders-deadletter", ContentType: "text/plain", Text: envelopeText(reason, m, orderstream.ContentKey(s.a.Body))})
			}
		}
		s.invs = []*hostemu.Invocation{inv}
	}
	for _, tt := range []spoiled{
		{"every envelope in place", func(s *scenario) {
			batch(s, map[*hostemu.Message]string{s.b: "HashMismatch", s.bad: "MalformedMessage"})
		}, nil, ""},
		{"the mismatch not parked", func(s *scenario) {
			batch(s, map[*hostemu.Message]string{s.bad: "MalformedMessage"})
		}, []string{"got its outcome"}, ""},
		{"the stored content parked", func(s *scenario) {
			batch(s, map[*hostemu.Message]string{s.a: "HashMismatch", s.b: "HashMismatch", s.bad: "MalformedMessage"})
		}, []string{"got its outcome", "conflict record"}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) { tt.run(t) })
	}
}

// A parking output that is not an envelope is a violation, not skipped.
func TestParkedNonEnvelopeIsCaught(t *testing.T) {
	spoiled{spoil: func(s *scenario) { s.invs[3].Outputs[0].Text = "not json" },
		checks: []string{"got its outcome"}, says: "parked a message that is not an envelope"}.run(t)
}
