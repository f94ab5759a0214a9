package rig

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/ordersink/orders-consumer/testbed/verify"
)

// eventTypeAccepted is the outbox event every accepted order carries.
const eventTypeAccepted = "OrderAccepted"

// Checks are the publisher's invariant against the documents read back:
// every accepted order's OrderAccepted event is on the topic at least once,
// never sent before its order was stored, never one for an order that was
// not created, and a poison document is set aside without holding up its
// partition. An event comes twice only with its batch (sentTwiceCheck;
// at-least-once, consumers deduplicate on eventId).
func (r *PublisherResult) Checks(docs map[string][]json.RawMessage) []*verify.Check {
	orders := map[string]string{} // orderId -> requestHash
	for _, d := range docs["order"] {
		var h verify.DocHead
		if json.Unmarshal(d, &h) == nil {
			orders[h.OrderID] = h.RequestHash
		}
	}
	stored := map[string]bool{} // eventIds of stored outbox events
	var accepted []string
	for _, d := range docs["outboxEvent"] {
		var e struct{ EventID, OrderID, EventType string }
		if json.Unmarshal(d, &e) != nil {
			continue
		}
		stored[e.EventID] = true
		if _, ok := orders[e.OrderID]; ok && e.EventType == eventTypeAccepted {
			accepted = append(accepted, e.EventID)
		}
	}
	onTopic := map[string]bool{}
	for _, m := range r.Topic {
		onTopic[m.EventID] = true
	}

	every := &verify.Check{Name: "publisher: every accepted order's OrderAccepted event is on the topic", Checked: len(accepted)}
	if r.CaughtUp != nil {
		every.Fail("%v", r.CaughtUp)
	}
	for _, id := range accepted {
		if !onTopic[id] {
			every.Fail("%s: stored, never sent to the topic", id)
		}
	}
	after := &verify.Check{Name: "publisher: no event sent before its order was stored", Checked: len(r.Topic)}
	created := &verify.Check{Name: "publisher: every event on the topic is a stored outbox event of a created order", Checked: len(r.Topic)}
	for _, m := range r.Topic {
		if !m.OrderStored {
			after.Fail("%s sent by invocation %s while Cosmos held no order %s", m.EventID, m.Invocation, m.OrderID)
		}
		hash, ok := orders[m.OrderID]
		switch {
		case !ok:
			created.Fail("%s: no order %s was created", m.EventID, m.OrderID)
		case !stored[m.EventID]:
			created.Fail("%s: no such outbox document", m.EventID)
		case m.EventType == eventTypeAccepted && m.RequestHash != hash:
			created.Fail("%s carries requestHash %s, the stored order %s", m.EventID, m.RequestHash, hash)
		}
	}
	checks := []*verify.Check{every, after, created, r.sentTwiceCheck()}
	if r.Poison != "" {
		checks = append(checks, r.poisonCheck(orders, onTopic))
	}
	return checks
}

// sentTwiceCheck: an event is sent twice only because its batch came again:
// of the invocations that sent it, at most one had its batch checkpointed
// after it; every other was not (failed, its lease lost, its
// checkpoint refused, its instance stopped). A checkpointed batch sent again,
// or an event sent twice by one invocation (contract §10: each event once
// per invocation), is a duplicate nothing explains.
func (r *PublisherResult) sentTwiceCheck() *verify.Check {
	uncheckpointed := r.uncheckpointedWhy()
	checkpointed := map[string][]string{} // eventId -> checkpointed invocations that sent it
	type send struct{ event, invocation string }
	sends := map[send]int{}
	for _, m := range r.Topic {
		sends[send{m.EventID, m.Invocation}]++
		if _, ok := uncheckpointed[m.Invocation]; !ok && sends[send{m.EventID, m.Invocation}] == 1 {
			checkpointed[m.EventID] = append(checkpointed[m.EventID], m.Invocation)
		}
	}
	c := &verify.Check{Name: "publisher: an event sent twice came again with its batch (once per invocation; of the invocations that sent it, one at most had its batch checkpointed)", Checked: len(r.Topic)}
	for _, id := range slices.Sorted(maps.Keys(checkpointed)) {
		if invs := checkpointed[id]; len(invs) > 1 {
			c.Fail("%s sent by %d invocations whose batch was checkpointed: %s", id, len(invs), strings.Join(invs, ", "))
		}
	}
	for _, s := range slices.SortedFunc(maps.Keys(sends), func(a, b send) int {
		return cmp.Or(strings.Compare(a.event, b.event), strings.Compare(a.invocation, b.invocation))
	}) {
		if n := sends[s]; n > 1 {
			c.Fail("%s sent %d times by invocation %s", s.event, n, s.invocation)
		}
	}
	return c
}

// uncheckpointedWhy maps each invocation whose batch was not checkpointed
// to why.
func (r *PublisherResult) uncheckpointedWhy() map[string]string {
	why := map[string]string{}
	for _, u := range r.Stats.Uncheckpointed {
		why[u.Invocation] = u.Why
	}
	return why
}

// duplicatesByCause counts the sends of events sent more than once that were
// made by an invocation whose batch came again, by why ("failed", "lease
// lost", "checkpoint failed", "stopped"). (Not "resent": that is the HTTP
// API's outcome and the proxy's count of SDK retries.)
func (r *PublisherResult) duplicatesByCause() map[string]int {
	why := r.uncheckpointedWhy()
	sends := map[string]int{}
	for _, m := range r.Topic {
		sends[m.EventID]++
	}
	n := map[string]int{}
	for _, m := range r.Topic {
		if w, ok := why[m.Invocation]; ok && sends[m.EventID] > 1 {
			n[w]++
		}
	}
	return n
}

// WithoutPoison leaves out the poison document the run wrote: it is the
// run's, not an outbox event of the product's, so the order checks leave
// it out.
func (r *PublisherResult) WithoutPoison(docs []json.RawMessage) []json.RawMessage {
	if r.Poison == "" {
		return docs
	}
	return slices.DeleteFunc(docs, func(d json.RawMessage) bool {
		var h verify.DocHead
		return json.Unmarshal(d, &h) == nil && h.ID == r.Poison
	})
}

// poisonCheck: the poison document was set aside as Unpublishable, never
// sent, and its partition's OrderAccepted event, written after it, was.
func (r *PublisherResult) poisonCheck(orders map[string]string, onTopic map[string]bool) *verify.Check {
	c := &verify.Check{Name: "publisher: a poison document is set aside and its partition's later documents are published", Checked: 1}
	partition, _, _ := strings.Cut(r.Poison, ":event:")
	parked := false
	for _, s := range r.SetAside {
		parked = parked || s.MessageID == r.Poison && s.Reason == "Unpublishable"
	}
	if !parked {
		c.Fail("%s was not set aside as Unpublishable", r.Poison)
	}
	if onTopic[r.Poison] {
		c.Fail("%s was sent to the topic", r.Poison)
	}
	later := partition + ":event:" + eventTypeAccepted
	if _, ok := orders[partition]; !ok {
		c.Fail("order %s was not created, so nothing in its partition came after the poison document", partition)
	} else if !onTopic[later] {
		c.Fail("%s, written after the poison document, was not sent", later)
	}
	return c
}

// String is the summary line of the publisher's figures.
func (r *PublisherResult) String() string {
	distinct := map[string]bool{}
	for _, m := range r.Topic {
		distinct[m.EventID] = true
	}
	s := r.Stats
	dup := len(r.Topic) - len(distinct)
	var byCause []string
	for why, n := range r.duplicatesByCause() {
		byCause = append(byCause, fmt.Sprintf("%s %d", why, n))
	}
	slices.Sort(byCause)
	return fmt.Sprintf("%d events on the topic (%d distinct, %d duplicates: %.1f per 10,000; their sends before the batch came again, by why: %s); %d batches of %d documents checkpointed in %d invocations, %d failed (%d handler kills mid-invocation, %d topic sends refused), %d retries, %d batches skipped after the retries; %d set aside; %d leases: %d taken, %d of them from another instance, %d lost mid-batch; retry policy %s",
		len(r.Topic), len(distinct), dup, 1e4*float64(dup)/float64(max(len(r.Topic), 1)), cmp.Or(strings.Join(byCause, ", "), "none"), s.Batches, s.Documents, s.Invocations, s.Failed, s.Kills, r.Refused,
		s.Retries, s.Skipped, len(r.SetAside), s.Leases, s.Acquired, s.TakenOver, s.Lost, r.Policy)
}
