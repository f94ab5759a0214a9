package handler

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/ordersink/orders-consumer/handler/handlertest"
	"github.com/ordersink/orders-consumer/orders"
	"github.com/ordersink/orders-consumer/orders/orderstest"
)

// published decodes Outputs.events: one JSON object per message.
func (a answer) published(t *testing.T) []map[string]json.RawMessage {
	t.Helper()
	raw, ok := a.Outputs[EventsBinding]
	if !ok {
		return nil
	}
	var events []map[string]json.RawMessage
	if err := json.Unmarshal(raw, &events); err != nil {
		t.Fatalf("events output is not an array of objects (a bare string would be base64-decoded by the host): %s", raw)
	}
	return events
}

func eventIDs(t *testing.T, events []map[string]json.RawMessage) []string {
	t.Helper()
	ids := make([]string, len(events))
	for i, e := range events {
		var id, key string
		_ = json.Unmarshal(e["eventId"], &id)
		_ = json.Unmarshal(e["idempotencyKey"], &key)
		if id == "" || key != id {
			t.Errorf("event %d: eventId %q, idempotencyKey %q", i, id, key)
		}
		ids[i] = id
	}
	sort.Strings(ids)
	return ids
}

func TestPublisherPublishesEachOutboxEventOncePerInvocation(t *testing.T) {
	s := startServer(t, testStore(t), 0)
	var a1, a2 string
	var b1, b2 []byte
	t.Run("ids", func(t *testing.T) { a1, b1 = handlertest.UniqueOrder(t); a2, b2 = handlertest.UniqueOrder(t) })
	for _, req := range [][]byte{
		hostInvocation(b1, a1, 1), hostInvocation(b2, a2, 1),
		hostInvocation(mismatchOf(b1), a1, 1), statusInvocation(t, a2, "Paid", 1, 1),
	} {
		if a := s.invoke(t, req); a.Status != http.StatusOK {
			t.Fatalf("seed: %d %v", a.Status, a.Logs)
		}
	}
	// What the change feed would hand over: every document of both
	// partitions (orders, events, a conflict record, a status), as stored.
	var feed []json.RawMessage
	stored := map[string]map[string]json.RawMessage{}
	for _, id := range []string{a1, a2} {
		docs, err := testStore(t).PartitionDocuments(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range docs {
			var m map[string]json.RawMessage
			_ = json.Unmarshal(d, &m)
			var docID string
			_ = json.Unmarshal(m["id"], &docID)
			stored[docID] = m
		}
		feed = append(feed, docs...)
	}
	if len(feed) != 6 {
		t.Fatalf("feed has %d documents, want 6", len(feed))
	}
	e1, e2 := orders.EventID(a1, orders.EventOrderAccepted), orders.EventID(a2, orders.EventOrderAccepted)
	want := []string{e1, e2}
	sort.Strings(want)

	first := s.invokeFunction(t, FunctionPublishOrderEvents, hostChangeFeed(feed))
	if first.Status != http.StatusOK {
		t.Fatalf("status %d", first.Status)
	}
	events := first.published(t)
	if got := eventIDs(t, events); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("published %v, want %v", got, want)
	}
	for _, e := range events {
		var id string
		_ = json.Unmarshal(e["eventId"], &id)
		doc := stored[id]
		for _, k := range []string{"orderId", "eventType", "occurredAt", "requestHash", "payload"} {
			if string(e[k]) != string(doc[k]) {
				t.Errorf("%s: %s = %s, stored %s", id, k, e[k], doc[k])
			}
		}
		for _, k := range []string{"id", "type", "ttl", "_etag", "_rid", "_ts"} {
			if _, ok := e[k]; ok {
				t.Errorf("%s: message carries the document's %s", id, k)
			}
		}
	}

	replays := []struct {
		name string
		feed []json.RawMessage
		want []string
	}{
		{"the same batch again (lease not checkpointed)", feed, want},
		{"an event twice in one batch", append(append([]json.RawMessage{}, feed...), feed...), want},
		{"one event again among its order's documents", feed[:3], []string{e1}},
	}
	for _, r := range replays {
		t.Run(r.name, func(t *testing.T) {
			a := s.invokeFunction(t, FunctionPublishOrderEvents, hostChangeFeed(r.feed))
			if a.Status != http.StatusOK {
				t.Fatalf("status %d", a.Status)
			}
			got := a.published(t)
			ids := eventIDs(t, got)
			if strings.Join(ids, " ") != strings.Join(r.want, " ") {
				t.Errorf("published %v, want %v", ids, r.want)
			}
			// A replay republishes the very same message: consumers see
			// one eventId, whatever the number of copies.
			for _, e := range got {
				for _, f := range events {
					if string(e["eventId"]) == string(f["eventId"]) && mustJSON(e) != mustJSON(f) {
						t.Errorf("replayed message differs:\nfirst  %s\nreplay %s", mustJSON(f), mustJSON(e))
					}
				}
			}
		})
	}
}

func TestPublisherDecodesTheHostShapes(t *testing.T) {
	s := startServer(t, orderstest.NewMemStore(), 0)
	for _, name := range []string{"cosmosdb-trigger.json", "single-encoded.json", "real-array.json"} {
		t.Run(name, func(t *testing.T) {
			request, err := os.ReadFile(filepath.Join("testdata", "changefeed", name))
			if err != nil {
				t.Fatal(err)
			}
			a := s.invokeFunction(t, FunctionPublishOrderEvents, request)
			if a.Status != http.StatusOK {
				t.Fatalf("status %d", a.Status)
			}
			if got := eventIDs(t, a.published(t)); len(got) != 1 || got[0] != "ORD-2026-000123:event:OrderAccepted" {
				t.Errorf("published %v", got)
			}
		})
	}
}

func TestPublisherBadInput(t *testing.T) {
	s := startServer(t, orderstest.NewMemStore(), 0)
	good := json.RawMessage(`{"id":"A:event:OrderAccepted","orderId":"A","type":"outboxEvent","eventId":"A:event:OrderAccepted","idempotencyKey":"A:event:OrderAccepted","eventType":"OrderAccepted","occurredAt":"2026-11-29T10:00:02Z","payload":{"orderId":"A"}}`)
	tests := []struct {
		name      string
		request   []byte
		status    int
		published int
		logged    string
	}{
		{"no documents", hostChangeFeed(nil), http.StatusOK, 0, ""},
		{"an outbox event without payload beside a good one", hostChangeFeed([]json.RawMessage{
			json.RawMessage(`{"id":"B:event:OrderAccepted","orderId":"B","type":"outboxEvent","eventId":"B:event:OrderAccepted","eventType":"OrderAccepted"}`), good}),
			http.StatusOK, 1, "not publishable"},
		{"a document that is not an object", hostChangeFeed([]json.RawMessage{json.RawMessage(`[1]`), good}), http.StatusOK, 1, "not publishable"},
		{"envelope not JSON", []byte(`<xml/>`), http.StatusInternalServerError, 0, "not decodable"},
		{"documents not a list", []byte(`{"Data":{"documents":"{}"},"Metadata":{}}`), http.StatusInternalServerError, 0, "not decodable"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := s.invokeFunction(t, FunctionPublishOrderEvents, tc.request)
			if a.Status != tc.status {
				t.Fatalf("status %d, want %d", a.Status, tc.status)
			}
			if n := len(a.published(t)); n != tc.published {
				t.Errorf("published %d, want %d", n, tc.published)
			}
			if tc.logged != "" && !strings.Contains(s.logsOf(a), tc.logged) {
				t.Errorf("log lacks %q", tc.logged)
			}
		})
	}
}

// The publisher's structured line counts what it could not publish and is
// the alarm (ERROR) when that is not zero; with nothing to publish there is
// no events output at all.
func TestPublisherLogLine(t *testing.T) {
	s := startServer(t, testEnv(t).Store, 0)
	good := json.RawMessage(`{"id":"A:event:OrderAccepted","orderId":"A","type":"outboxEvent","eventId":"A:event:OrderAccepted","idempotencyKey":"A:event:OrderAccepted","eventType":"OrderAccepted","occurredAt":"2026-11-29T10:00:02Z","payload":{"orderId":"A"}}`)
	order := json.RawMessage(`{"id":"B","orderId":"B","type":"order"}`)
	tests := []struct {
		name          string
		docs          []json.RawMessage
		level         string
		unpublishable float64
		events        bool
	}{
		{"one good, one not an object", []json.RawMessage{good, json.RawMessage(`[1]`)}, "ERROR", 1, true},
		{"only an order", []json.RawMessage{order}, "INFO", 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			a := s.invokeFunction(t, FunctionPublishOrderEvents, hostChangeFeed(tc.docs))
			elapsed := time.Since(start)
			if _, ok := a.Outputs[EventsBinding]; a.Status != http.StatusOK || ok != tc.events {
				t.Fatalf("status %d, outputs %v: want an events output %v", a.Status, a.Outputs, tc.events)
			}
			if _, ok := a.Outputs[ParkingBinding]; ok != (tc.unpublishable > 0) {
				t.Errorf("outputs %v: want a parking output only for what is set aside", a.Outputs)
			}
			var l map[string]any
			for _, line := range strings.Split(s.logsOf(a), "\n") {
				if json.Unmarshal([]byte(line), &l) == nil && l["msg"] == "publish" {
					break
				}
			}
			if l["level"] != tc.level || l["unpublishable"] != tc.unpublishable {
				t.Errorf("publish line %v: want level %s, unpublishable %v", l, tc.level, tc.unpublishable)
			}
			if d, _ := l["durationMs"].(float64); d > float64(elapsed.Milliseconds()+1) {
				t.Errorf("durationMs %v over the %v the request took", d, elapsed)
			}
		})
	}
}
