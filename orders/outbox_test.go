package orders_test

import (
	"encoding/json"
	"sort"
	"strings"
	"testing"
	"time"

	. "github.com/ordersink/orders-consumer/orders"
)

func TestAcceptanceDocuments(t *testing.T) {
	o, err := ParseOrder([]byte(strings.Replace(exampleBody, `"currency"`, `"giftWrap":true,"currency"`, 1)))
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 29, 10, 0, 2, 500, time.UTC)
	b, err := o.AcceptanceDocuments(Acceptance{MessageID: "MSG-1", AcceptedAt: at})
	if err != nil || len(b.Documents) != 2 || b.OrderID != o.ID {
		t.Fatalf("%+v, %v", b, err)
	}
	docs := b.Documents
	if docs[0].ID != o.ID || !strings.Contains(string(docs[0].Body), `"type":"order"`) {
		t.Errorf("first document is not the order (the marker): %s", docs[0].Body)
	}
	var e map[string]any
	if err := json.Unmarshal(docs[1].Body, &e); err != nil {
		t.Fatal(err)
	}
	id := "ORD-2026-000123:event:OrderAccepted"
	if docs[1].ID != id || e["id"] != id || e["eventId"] != id || e["idempotencyKey"] != id || e["orderId"] != o.ID ||
		e["type"] != TypeOutboxEvent || e["eventType"] != EventOrderAccepted || e["requestHash"] != o.Hash ||
		e["occurredAt"] != "2026-11-29T10:00:02.000000500Z" || e["ttl"] != float64(OutboxEventTTL) {
		t.Errorf("event = %v", e)
	}
	p := e["payload"].(map[string]any)
	want := []string{"acceptedAt", "currency", "customerId", "lines", "messageId", "orderId", "placedAt", "total"}
	var got []string
	for k := range p {
		got = append(got, k)
	}
	sort.Strings(got)
	if strings.Join(got, ",") != strings.Join(want, ",") || p["messageId"] != "MSG-1" || p["total"] != "44.98" {
		t.Errorf("payload = %v (members %v, want %v: no meta, no unknown members)", p, got, want)
	}
	again, err := o.AcceptanceDocuments(Acceptance{MessageID: "MSG-1", AcceptedAt: at})
	if err != nil || len(again.Documents) != 2 {
		t.Fatalf("the same acceptance again: %+v, %v", again, err)
	}
	if string(again.Documents[1].Body) != string(docs[1].Body) || string(again.Event) != string(b.Event) {
		t.Error("the event document is not deterministic")
	}
}

// The event the processor checks against the topic's budget is, byte for
// byte, what the publisher sends from the stored outbox document, and what
// AcceptedEvent encodes to: one event, however it is reached.
func TestAcceptanceEventIsThePublishedEvent(t *testing.T) {
	spaced := strings.NewReplacer(`,"`, ", \n \"", `":`, `" : `, `[{`, `[ {`).Replace(exampleBody)
	for name, body := range map[string]string{
		"compact":            exampleBody,
		"spaced as sent":     spaced,
		"escapes and <tags>": strings.Replace(exampleBody, `"SKU-1"`, `"S\u004bU-<1>&\u00e9"`, 1),
	} {
		t.Run(name, func(t *testing.T) {
			o, err := ParseOrder([]byte(body))
			if err != nil {
				t.Fatal(err)
			}
			a := Acceptance{MessageID: "MSG-1", AcceptedAt: time.Date(2026, 11, 29, 10, 0, 2, 120000000, time.UTC)}
			b, err := o.AcceptanceDocuments(a)
			if err != nil || len(b.Documents) != 2 {
				t.Fatalf("acceptance: %+v, %v; want the order and its event", b, err)
			}
			e, err := PublishableEvent(b.Documents[1].Body)
			if err != nil || e == nil {
				t.Fatalf("the stored event is not publishable: %+v, %v", e, err)
			}
			sent, err := json.Marshal(e)
			if err != nil {
				t.Fatal(err)
			}
			if string(sent) != string(b.Event) {
				t.Errorf("checked event\n%s\ndiffers from the published one\n%s", b.Event, sent)
			}
			direct, _ := o.AcceptedEvent(a)
			if enc, _ := json.Marshal(direct); string(enc) != string(b.Event) {
				t.Errorf("AcceptedEvent encodes to\n%s\nnot\n%s", enc, b.Event)
			}
			if !json.Valid(b.Documents[1].Body) || strings.ContainsAny(string(b.Event), "\n ") {
				t.Errorf("stored event %s, event %s: want valid, compact JSON", b.Documents[1].Body, b.Event)
			}
		})
	}
}

func TestPublishableEvent(t *testing.T) {
	o, err := ParseOrder([]byte(exampleBody))
	if err != nil {
		t.Fatal(err)
	}
	b, err := o.AcceptanceDocuments(Acceptance{MessageID: "MSG-1", AcceptedAt: time.Now()})
	if err != nil || len(b.Documents) != 2 {
		t.Fatalf("acceptance: %+v, %v; want the order and its event", b, err)
	}
	docs := b.Documents
	stored := strings.Replace(string(docs[1].Body), `{`, `{"_etag":"\"0f00\"","_rid":"x==","_ts":1796033202,"_lsn":5,`, 1)

	e, err := PublishableEvent([]byte(stored))
	if err != nil || e == nil {
		t.Fatalf("%+v, %v", e, err)
	}
	msg, _ := json.Marshal(e)
	var m map[string]json.RawMessage
	_ = json.Unmarshal(msg, &m)
	for _, k := range []string{"id", "type", "ttl", "_etag", "_rid", "_ts", "_lsn"} {
		if _, ok := m[k]; ok {
			t.Errorf("message carries %s: %s", k, msg)
		}
	}
	if e.EventID != EventID(o.ID, EventOrderAccepted) || e.IdempotencyKey != e.EventID || e.OrderID != o.ID || len(e.Payload) == 0 {
		t.Errorf("event = %+v", e)
	}

	tests := []struct {
		name    string
		doc     string
		skipped bool // not an outbox event: nothing, no error
	}{
		{"the order", string(docs[0].Body), true},
		{"a conflict record", `{"id":"A:conflict:1","orderId":"A","type":"conflict"}`, true},
		{"a status", `{"id":"A:status","orderId":"A","type":"orderStatus","version":3}`, true},
		{"no type", `{"id":"x"}`, true},
		{"not an object", `[1,2]`, false},
		{"event without eventId", `{"id":"A:event:X","orderId":"A","type":"outboxEvent","eventType":"X","payload":{}}`, false},
		{"event without payload", `{"id":"A:event:X","orderId":"A","type":"outboxEvent","eventId":"A:event:X","eventType":"X"}`, false},
		{"event with a string payload", `{"id":"A:event:X","orderId":"A","type":"outboxEvent","eventId":"A:event:X","eventType":"X","payload":"{}"}`, false},
		// Members typed otherwise than an event's: read again by type.
		{"an order with a numeric eventType", `{"id":"A","orderId":"A","type":"order","eventType":5}`, true},
		{"event with a string ttl", `{"id":"A:event:X","orderId":"A","type":"outboxEvent","eventId":"A:event:X","eventType":"X","payload":{},"ttl":"x"}`, false},
		{"a numeric type", `{"id":"A","type":5}`, false},
	}
	for _, tc := range tests {
		e, err := PublishableEvent([]byte(tc.doc))
		if e != nil || (err == nil) != tc.skipped {
			t.Errorf("%s: %+v, %v", tc.name, e, err)
		}
	}
	// Events written before idempotencyKey existed still carry one.
	old, err := PublishableEvent([]byte(`{"id":"A:event:X","orderId":"A","type":"outboxEvent","eventId":"A:event:X","eventType":"X","payload":{}}`))
	if err != nil || old.IdempotencyKey != "A:event:X" {
		t.Errorf("%+v, %v", old, err)
	}
}

// No outcome depends on the instant (docs/contract.md §3, event size): the
// OrderAccepted event has one length at every instant of acceptance, so an
// order at the event's budget is accepted or refused alike whenever it
// comes, and a resend is judged as its first delivery was.
func TestEventSizeDoesNotDependOnTheInstant(t *testing.T) {
	o, err := ParseOrder([]byte(exampleBody))
	if err != nil {
		t.Fatal(err)
	}
	sizes := map[int][]string{}
	for _, ns := range []int{0, 100_000_000, 120_000_000, 123_456_789, 999_999_999, 1} {
		at := time.Date(2026, 11, 29, 10, 0, 2, ns, time.UTC)
		b, err := o.AcceptanceDocuments(Acceptance{MessageID: "MSG-1", AcceptedAt: at})
		if err != nil {
			t.Fatal(err)
		}
		sizes[len(b.Event)] = append(sizes[len(b.Event)], at.Format(time.RFC3339Nano))
		zero, err := o.Document(Acceptance{MessageID: "MSG-1"})
		if err != nil || len(b.Documents[0].Body) != len(zero) {
			t.Errorf("the order document's length depends on the instant %s (%v)", at.Format(time.RFC3339Nano), err)
		}
	}
	if len(sizes) != 1 {
		t.Errorf("event lengths by instant: %v; want one length", sizes)
	}
}
