package rig

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/ordersink/orders-consumer/testbed/hostemu"
)

// Each publisher check fails on the evidence it exists for, and holds on a
// clean run with duplicates on the topic.
func TestPublisherChecks(t *testing.T) {
	order := func(id, hash string) json.RawMessage {
		return json.RawMessage(fmt.Sprintf(`{"id":%q,"orderId":%q,"type":"order","requestHash":%q}`, id, id, hash))
	}
	event := func(id, hash string) json.RawMessage {
		return json.RawMessage(fmt.Sprintf(`{"id":"%s:event:OrderAccepted","orderId":%q,"type":"outboxEvent","eventId":"%s:event:OrderAccepted","eventType":"OrderAccepted","requestHash":%q}`, id, id, id, hash))
	}
	docs := map[string][]json.RawMessage{
		"order":       {order("A", "h1"), order("B", "h2")},
		"outboxEvent": {event("A", "h1"), event("B", "h2")},
	}
	sent := func(id, hash string, stored bool) topicMessage {
		return topicMessage{EventID: id + ":event:OrderAccepted", OrderID: id, EventType: "OrderAccepted", RequestHash: hash, OrderStored: stored, Invocation: "inv-" + id}
	}
	clean := func() *PublisherResult {
		// A's first send was in an invocation that failed; its batch came again.
		first := sent("A", "h1", true)
		first.Invocation = "inv-failed"
		return &PublisherResult{Topic: []topicMessage{first, sent("B", "h2", true), sent("A", "h1", true)},
			Stats:  hostemu.ChangeFeedStats{Uncheckpointed: []hostemu.Uncheckpointed{{Invocation: "inv-failed", Why: "failed"}}},
			Poison: "B:event:Poison", SetAside: []SetAside{{Reason: "Unpublishable", OrderID: "B", MessageID: "B:event:Poison"}}}
	}
	for name, tc := range map[string]struct {
		change func(*PublisherResult)
		fails  []string // the checks that must fail, by words of their names
	}{
		"clean, with a duplicate": {func(*PublisherResult) {}, nil},
		"an event never sent": {func(r *PublisherResult) {
			r.Topic = r.Topic[1:2]
		}, []string{"every accepted order"}},
		"the feed did not catch up": {func(r *PublisherResult) {
			r.CaughtUp = errors.New("not within 2m")
		}, []string{"every accepted order"}},
		"an event before its order": {func(r *PublisherResult) {
			r.Topic[1].OrderStored = false
		}, []string{"before its order"}},
		"an event of an order never created": {func(r *PublisherResult) {
			r.Topic = append(r.Topic, sent("C", "h3", true))
		}, []string{"created order"}},
		"an event with another requestHash": {func(r *PublisherResult) {
			r.Topic[0].RequestHash = "h9"
		}, []string{"created order"}},
		"the poison not set aside": {func(r *PublisherResult) {
			r.SetAside = nil
		}, []string{"poison"}},
		"the poison's partition held up": {func(r *PublisherResult) {
			r.Topic = r.Topic[:1]
		}, []string{"every accepted order", "poison"}},
		"a checkpointed batch sent again": {func(r *PublisherResult) {
			r.Stats.Uncheckpointed = nil
		}, []string{"sent twice"}},
		"an event sent twice by one invocation": {func(r *PublisherResult) {
			r.Topic = append(r.Topic, r.Topic[1])
		}, []string{"sent twice"}},
		"an event sent twice by one invocation whose batch came again": {func(r *PublisherResult) {
			r.Topic = append(r.Topic, r.Topic[0])
		}, []string{"sent twice"}},
		"the poison sent": {func(r *PublisherResult) {
			r.Topic = append(r.Topic, topicMessage{EventID: "B:event:Poison", OrderID: "B", OrderStored: true})
		}, []string{"created order", "poison"}},
	} {
		t.Run(name, func(t *testing.T) {
			r := clean()
			tc.change(r)
			checks := r.Checks(docs)
			if len(checks) != 5 {
				t.Fatalf("%d checks, want 5", len(checks))
			}
			for _, c := range checks {
				want := slices.ContainsFunc(tc.fails, func(w string) bool { return strings.Contains(c.Name, w) })
				if got := len(c.Violations) > 0; got != want {
					t.Errorf("%s: violations %v, want failing %v", c.Name, c.Violations, want)
				}
			}
		})
	}
}

// The run's poison document is left out of the order checks' documents.
func TestWithoutPoison(t *testing.T) {
	r := &PublisherResult{Poison: "B:event:Poison"}
	docs := []json.RawMessage{json.RawMessage(`{"id":"A:event:OrderAccepted"}`), json.RawMessage(`{"id":"B:event:Poison"}`)}
	got := r.WithoutPoison(docs)
	if len(got) != 1 || !strings.Contains(string(got[0]), "A:event") {
		t.Errorf("WithoutPoison: %s", got)
	}
}

// The figures say why each event sent twice came again.
func TestDuplicatesByCause(t *testing.T) {
	r := &PublisherResult{
		Topic: []topicMessage{{EventID: "A", Invocation: "i1"}, {EventID: "B", Invocation: "i1"}, {EventID: "A", Invocation: "i2"},
			{EventID: "C", Invocation: "i3"}, {EventID: "C", Invocation: "i4"}, {EventID: "D", Invocation: "i5"}},
		Stats: hostemu.ChangeFeedStats{Uncheckpointed: []hostemu.Uncheckpointed{{Invocation: "i1", Why: "failed"}, {Invocation: "i3", Why: "lease lost"}, {Invocation: "i5", Why: "stopped"}}},
	}
	// B and D were sent by uncheckpointed invocations but only once: not counted.
	if got, want := r.duplicatesByCause(), map[string]int{"failed": 1, "lease lost": 1}; !maps.Equal(got, want) {
		t.Errorf("duplicates by cause %v, want %v", got, want)
	}
	if s := r.String(); !strings.Contains(s, "2 duplicates: 3333.3 per 10,000; their sends before the batch came again, by why: failed 1, lease lost 1)") {
		t.Errorf("summary %q lacks the duplicates by why", s)
	}
}
