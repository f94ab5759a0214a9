package verify

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sort"

	"github.com/ordersink/orders-consumer/testbed/history"
	"github.com/ordersink/orders-consumer/testbed/hostemu"
	"github.com/ordersink/orders-consumer/testbed/orderstream"
)

// Check is one invariant and the places it did not hold.
type Check struct {
	Name string
	// Checked is how many things (messages, orderIds, documents) it looked at.
	Checked    int
	Violations []string
}

// Fail books one violation.
func (c *Check) Fail(format string, args ...any) {
	c.Violations = append(c.Violations, fmt.Sprintf(format, args...))
}

// Accounted is a message the consumer gave up on with a reason, not a
// violation: the broker dead-lettered it or the handler parked it as
// RetryBudgetExhausted after the faults outlasted its retry budget.
type Accounted struct {
	MessageID, Reason, Detail string
}

// Findings are the results of the checks after a run.
type Findings struct {
	Checks []*Check
	// Accounted are messages given up on with a named reason.
	Accounted []Accounted
	// OrdersWithoutEvent are orders whose OrderAccepted outbox event is
	// missing. On real Cosmos DB the batch is atomic and this cannot
	// happen; the local emulator does not roll a batch back, so there it is
	// reported rather than counted as a violation (Atomic false).
	OrdersWithoutEvent []string
	Atomic             bool
	// Documents counts the documents read back, by type.
	Documents map[string]int
	// Recoveries are the figures of each outage of the run.
	Recoveries []Recovery
	// History is what the history check found and cost (nil: not run).
	History *history.Result
}

// Violations is the number of places an invariant did not hold.
func (f *Findings) Violations() int {
	n := 0
	for _, c := range f.Checks {
		n += len(c.Violations)
	}
	if f.Atomic {
		n += len(f.OrdersWithoutEvent)
	}
	return n
}

// bookkeeping are the members the consumer and Cosmos add to a stored order
// (owner and submissionId when the HTTP API stored it: a client's fall-back
// from the queue may win), and meta (kept as the first accepted message had
// it, not part of the content); what is left is the business content the
// producer sent.
var bookkeeping = []string{"id", "type", "requestHash", "hashVersion", "messageId", "acceptedAt", "meta",
	"owner", "submissionId", "_rid", "_self", "_etag", "_attachments", "_ts", "_lsn"}

// content decodes a JSON object without the named members, numbers kept as
// written, for comparing contents independently of the fingerprint code.
func content(b []byte, drop ...string) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, err
	}
	for _, k := range drop {
		delete(m, k)
	}
	return m, nil
}

// storedOrder is an order document: its requestHash and its content.
type storedOrder struct {
	hash    string
	content map[string]any
}

// DocHead is the fields the checks read from any document.
type DocHead struct {
	ID           string `json:"id"`
	Type         string `json:"type"`
	OrderID      string `json:"orderId"`
	RequestHash  string `json:"requestHash"`
	StoredHash   string `json:"storedHash"`
	IncomingHash string `json:"incomingHash"`
}

// head reads a document's DocHead; what is not there is left empty.
func head(raw json.RawMessage) DocHead {
	var h DocHead
	_ = json.Unmarshal(raw, &h)
	return h
}

// CheckRun checks every invariant of a chaos run against the documents it
// left, by type.
func CheckRun(docs map[string][]json.RawMessage, ev Evidence) *Findings {
	// Messages of another type (a valid Subject such as
	// OrderStatusChanged) are delivered but not checked here.
	ev.Messages = slices.DeleteFunc(slices.Clone(ev.Messages), func(m *hostemu.Message) bool {
		return orderstream.Classify(m).OtherType
	})
	f := &Findings{Atomic: ev.Atomic, Documents: map[string]int{}}
	for t, d := range docs {
		f.Documents[t] = len(d)
	}

	classes := make(map[*hostemu.Message]orderstream.Class, len(ev.Messages))
	byOrder := map[string][]*hostemu.Message{}
	for _, m := range ev.Messages {
		c := orderstream.Classify(m)
		classes[m] = c
		if c.Valid {
			byOrder[c.OrderID] = append(byOrder[c.OrderID], m)
		}
	}

	settled := checkSettled(ev, f)

	stored, orderCheck := checkOrders(docs["order"], byOrder, ev.Created)
	msgCheck, accounted := checkMessages(ev, classes, stored)
	ev.Fates.mu.Lock()
	for _, b := range ev.Fates.badEnvelopes {
		msgCheck.Fail("%s", b)
	}
	ev.Fates.mu.Unlock()
	f.Accounted = append(f.Accounted, accounted...)
	outbox := checkOutbox(docs["outboxEvent"], stored, f)

	conflicts := checkConflicts(docs["conflict"], stored, ev, classes)
	stray := checkStray(docs, byOrder)
	incidents, recs := incidentChecks(ev.Messages, ev.Fates, ev.Outages, ev.CreatedAt, ev.RecoveryBound)
	f.Recoveries = recs
	f.Checks = append([]*Check{settled, orderCheck, msgCheck, outbox, conflicts, stray}, incidents...)
	f.Checks = append(f.Checks, clockCheck(ev.Fates.invocationCount(), ev.Queue, ev.Worker))
	return f
}

// checkSettled: every message completed or dead-lettered, the queue empty.
// The dead letters are accounted in f.
func checkSettled(ev Evidence, f *Findings) *Check {
	settled := &Check{Name: "nothing lost: every message completed or dead-lettered"}
	settled.Checked = len(ev.Messages)
	for _, m := range ev.Messages {
		if fa := ev.Fates.fateOf(m); fa == nil || fa.final == "" {
			settled.Fail("message %s (sequence %d) was never settled", m.MessageID, m.SequenceNumber)
		}
	}
	if ev.Queue.Outstanding != 0 {
		settled.Fail("the queue still holds %d messages", ev.Queue.Outstanding)
	}
	for _, d := range ev.Dead {
		f.Accounted = append(f.Accounted, Accounted{MessageID: d.Message.MessageID, Reason: d.Reason,
			Detail: fmt.Sprintf("after %d deliveries; last failure: %s", d.DeliveryCount, d.Description)})
	}
	return settled
}

// checkOutbox: no outbox event without its order, and each carries its
// order's requestHash; orders without an event are listed in f.
func checkOutbox(events []json.RawMessage, stored map[string]*storedOrder, f *Findings) *Check {
	outbox := &Check{Name: "no outbox event without its order (and with the order's requestHash)"}
	withEvent := map[string]bool{}
	for _, raw := range events {
		outbox.Checked++
		e := head(raw)
		withEvent[e.OrderID] = true
		o, ok := stored[e.OrderID]
		switch {
		case !ok:
			outbox.Fail("outbox event %s has no order %s", e.ID, e.OrderID)
		case e.RequestHash != o.hash:
			outbox.Fail("outbox event %s carries %s, the order %s", e.ID, e.RequestHash, o.hash)
		}
	}
	for id := range stored {
		if !withEvent[id] {
			f.OrdersWithoutEvent = append(f.OrdersWithoutEvent, id)
		}
	}
	sort.Strings(f.OrdersWithoutEvent)
	return outbox
}

// checkStray: nothing written for invalid messages or unknown orderIds.
func checkStray(docs map[string][]json.RawMessage, byOrder map[string][]*hostemu.Message) *Check {
	stray := &Check{Name: "nothing written for invalid messages or unknown orderIds"}
	for t, ds := range docs {
		for _, raw := range ds {
			stray.Checked++
			h := head(raw)
			if _, ok := byOrder[h.OrderID]; !ok {
				stray.Fail("%s document %s has orderId %q, which no valid message carried", t, h.ID, h.OrderID)
			}
		}
	}
	return stray
}

// checkOrders: one order document per distinct valid orderId, holding the
// content of the first accepted payload. "First accepted" is the one create
// Cosmos answered 201 for (the proxy's ledger, whether or not the answer
// reached the handler); every later create of that id got 409.
func checkOrders(orderDocs []json.RawMessage, byOrder map[string][]*hostemu.Message, created map[string][]string) (map[string]*storedOrder, *Check) {
	c := &Check{Name: "one order per valid orderId, with the content of the create Cosmos accepted first"}
	stored := map[string]*storedOrder{}
	count := map[string]int{}
	for _, raw := range orderDocs {
		h := head(raw)
		count[h.OrderID]++
		bc, err := content(raw, bookkeeping...)
		if err != nil {
			c.Fail("order %s: unreadable document: %v", h.OrderID, err)
			continue
		}
		stored[h.OrderID] = &storedOrder{hash: h.RequestHash, content: bc}
	}
	for _, id := range slices.Sorted(maps.Keys(byOrder)) {
		c.Checked++
		acks := created[id]
		switch {
		case count[id] > 1:
			c.Fail("order %s: %d order documents", id, count[id])
		case len(acks) > 1:
			c.Fail("order %s: Cosmos accepted %d creates (%v)", id, len(acks), acks)
		}
		o, ok := stored[id]
		if !ok {
			// Checked against the messages' fates in checkMessages: an
			// order may be missing only if all its messages were given up.
			if len(acks) > 0 {
				c.Fail("order %s: Cosmos accepted a create but holds no order document", id)
			}
			continue
		}
		switch {
		case created == nil:
			// No proxy, no ledger: what Cosmos accepted is not known.
		case len(acks) == 0:
			c.Fail("order %s: an order document exists but the proxy saw no create succeed", id)
		case acks[0] != o.hash:
			c.Fail("order %s: stored requestHash %s, but the create Cosmos accepted carried %s", id, o.hash, acks[0])
		}
		matched := false
		for _, m := range byOrder[id] {
			if mc, err := content(m.Body, "meta"); err == nil && reflect.DeepEqual(mc, o.content) {
				matched = true
				if got := orderstream.ContentKey(m.Body); got != o.hash {
					c.Fail("order %s: a message with the stored content has fingerprint %s, the stored one is %s", id, got, o.hash)
				}
			} else if orderstream.ContentKey(m.Body) == o.hash {
				c.Fail("order %s: a message with other content has the stored fingerprint %s", id, o.hash)
			}
		}
		if !matched {
			c.Fail("order %s: the stored content is not the content of any message sent for it", id)
		}
	}
	return stored, c
}

// checkMessages: each message got the outcome its content calls for. A valid
// message with the stored content completes without parking (created or
// duplicate); one with other content is parked HashMismatch; an invalid one
// is parked ValidationFailed or MalformedMessage.
func checkMessages(ev Evidence, classes map[*hostemu.Message]orderstream.Class, stored map[string]*storedOrder) (*Check, []Accounted) {
	c := &Check{Name: "every message got its outcome: duplicates completed, mismatches and invalid messages parked"}
	var accounted []Accounted
	givenUp := map[string]int{} // orderId -> messages given up on
	total := map[string]int{}
	for _, m := range ev.Messages {
		fa := ev.Fates.fateOf(m)
		if fa == nil || fa.final == "" {
			continue // reported as lost
		}
		c.Checked++
		cl := classes[m]
		if cl.Valid {
			total[cl.OrderID]++
		}
		reason := ""
		if fa.finalParked != nil {
			reason = fa.finalParked.Reason
		}
		if fa.final == hostemu.DeadLettered {
			givenUp[cl.OrderID]++
			continue // booked from the dead-letter list
		}
		if reason == "RetryBudgetExhausted" {
			givenUp[cl.OrderID]++
			accounted = append(accounted, Accounted{MessageID: m.MessageID, Reason: reason,
				Detail: fmt.Sprintf("parked at delivery %d", fa.finalParked.DeliveryCount)})
			if !cl.Valid {
				c.Fail("invalid message %s was retried until its budget ran out instead of being parked at once", m.MessageID)
			}
			continue
		}
		if !cl.Valid {
			if reason != "ValidationFailed" && reason != "MalformedMessage" {
				c.Fail("invalid message %s (orderId %q) completed with parking reason %q", m.MessageID, cl.OrderID, reason)
			}
			continue
		}
		if reason == "ValidationFailed" || reason == "MalformedMessage" {
			c.Fail("valid message %s (sequence %d) was parked %s: %s", m.MessageID, m.SequenceNumber, reason, fa.finalParked.Description)
			continue
		}
		o, ok := stored[cl.OrderID]
		if !ok {
			continue // checked below, once every message of the order is seen
		}
		mc, _ := content(m.Body, "meta")
		same := reflect.DeepEqual(mc, o.content)
		switch {
		case same && reason != "":
			c.Fail("message %s (sequence %d) has the stored content but was parked %s", m.MessageID, m.SequenceNumber, reason)
		case same:
			for _, p := range fa.parked {
				if p.Reason == "HashMismatch" {
					c.Fail("message %s (sequence %d) has the stored content but one delivery parked it HashMismatch", m.MessageID, m.SequenceNumber)
				}
			}
		case reason != "HashMismatch":
			c.Fail("message %s (sequence %d) carries other content than the stored order but completed with parking reason %q", m.MessageID, m.SequenceNumber, reason)
		case fa.finalParked.StoredHash != o.hash || fa.finalParked.IncomingHash != orderstream.ContentKey(m.Body):
			c.Fail("message %s: parked with storedHash %s incomingHash %s, want %s and %s", m.MessageID,
				fa.finalParked.StoredHash, fa.finalParked.IncomingHash, o.hash, orderstream.ContentKey(m.Body))
		}
	}
	for id, n := range total {
		if _, ok := stored[id]; !ok && givenUp[id] < n {
			c.Fail("order %s has no document, but %d of its %d messages were not given up on", id, n-givenUp[id], n)
		}
	}
	return c, accounted
}

// checkConflicts: every mismatching content that was parked has its conflict
// record beside the order, naming the stored and the incoming fingerprint.
func checkConflicts(conflictDocs []json.RawMessage, stored map[string]*storedOrder, ev Evidence, classes map[*hostemu.Message]orderstream.Class) *Check {
	c := &Check{Name: "every parked mismatch has its conflict record"}
	have := map[[2]string]DocHead{}
	for _, raw := range conflictDocs {
		h := head(raw)
		have[[2]string{h.OrderID, h.IncomingHash}] = h
	}
	want := map[[2]string]bool{}
	for _, m := range ev.Messages {
		fa := ev.Fates.fateOf(m)
		if fa == nil {
			continue
		}
		for _, p := range fa.parked {
			if p.Reason == "HashMismatch" {
				want[[2]string{classes[m].OrderID, p.IncomingHash}] = true
			}
		}
	}
	for k := range want {
		c.Checked++
		h, ok := have[k]
		switch {
		case !ok:
			c.Fail("order %s: mismatch %s parked without a conflict record", k[0], k[1])
		case stored[k[0]] == nil || h.StoredHash != stored[k[0]].hash:
			c.Fail("order %s: conflict record %s names storedHash %s", k[0], h.ID, h.StoredHash)
		}
	}
	return c
}
