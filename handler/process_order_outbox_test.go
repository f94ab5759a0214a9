package handler

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/ordersink/orders-consumer/handler/handlertest"
	"github.com/ordersink/orders-consumer/orders"
)

// mismatchOf changes the example order's content but not its orderId.
func mismatchOf(body []byte) []byte {
	other := bytes.Replace(body, []byte(`"quantity":1,"unitPrice":"5.00"`), []byte(`"quantity":2,"unitPrice":"5.00"`), 1)
	return bytes.Replace(other, []byte(`"44.98"`), []byte(`"49.98"`), 1)
}

func TestNewOrderWritesOrderAndOutboxEventInOneBatch(t *testing.T) {
	s := startServer(t, testStore(t), 0)
	id, body := handlertest.UniqueOrder(t)
	if a := s.invoke(t, hostInvocation(body, id, 1)); a.Status != http.StatusOK || a.Outcome() != "created" {
		t.Fatalf("new order: status %d, logs %v", a.Status, a.Logs)
	}
	docs := partition(t, id)
	order, events := handlertest.DocumentsOfType(docs, orders.TypeOrder), handlertest.DocumentsOfType(docs, orders.TypeOutboxEvent)
	if len(docs) != 2 || len(order) != 1 || len(events) != 1 {
		t.Fatalf("partition = %v, want the order and one outbox event", docs)
	}
	e, o := events[0], order[0]
	eventID := id + ":event:OrderAccepted"
	if e["id"] != eventID || e["eventId"] != eventID || e["idempotencyKey"] != eventID || e["orderId"] != id ||
		e["eventType"] != orders.EventOrderAccepted || e["requestHash"] != o["requestHash"] ||
		e["occurredAt"] != o["acceptedAt"] || e["ttl"] != float64(orders.OutboxEventTTL) {
		t.Errorf("outbox event = %v", e)
	}
	p, _ := e["payload"].(map[string]any)
	for _, k := range []string{"orderId", "customerId", "currency", "total", "placedAt", "messageId", "acceptedAt"} {
		if p[k] != o[k] {
			t.Errorf("payload.%s = %v, order has %v", k, p[k], o[k])
		}
	}
	if lines, _ := json.Marshal(p["lines"]); string(lines) != mustJSON(o["lines"]) {
		t.Errorf("payload.lines = %s", lines)
	}
	if _, ok := p["meta"]; ok {
		t.Error("payload carries the producer's meta")
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestRedeliveryAndMismatchWriteNothingNew checks every document of the
// partition, system properties included, so that a rewrite would show.
func TestRedeliveryAndMismatchWriteNothingNew(t *testing.T) {
	s := startServer(t, testStore(t), 0)
	id, body := s.created(t)
	before := docsOf(t, id)
	tests := []struct {
		name     string
		body     []byte
		delivery int
		outcome  string
		added    string // the type of the one document it may add
	}{
		{"same body redelivered", body, 2, "duplicate", ""},
		{"producer resend, only meta differs", bytes.Replace(body, []byte(`"web-shop"`), []byte(`"retry-job"`), 1), 1, "duplicate", ""},
		{"other content under the same orderId", mismatchOf(body), 1, "mismatch", orders.TypeConflict},
		{"that mismatch redelivered", mismatchOf(body), 2, "mismatch", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := s.invoke(t, hostInvocation(tc.body, id, tc.delivery))
			if a.Status != http.StatusOK || a.Outcome() != tc.outcome {
				t.Fatalf("status %d, logs %v, want %s", a.Status, a.Logs, tc.outcome)
			}
			after := docsOf(t, id)
			for docID, doc := range before {
				if after[docID] != doc {
					t.Errorf("document %s changed:\nbefore %s\nafter  %s", docID, doc, after[docID])
				}
			}
			for docID, doc := range after {
				if _, ok := before[docID]; ok {
					continue
				}
				if tc.added == "" || !strings.Contains(doc, `"type":"`+tc.added+`"`) {
					t.Errorf("new document %s: %s", docID, doc)
				}
			}
			before = after
		})
	}
}

func TestOrderTooLargeForOneBatchIsRefusedBeforeSending(t *testing.T) {
	store, requests := countingStore(t)
	s := startServer(t, store, 0)
	id, body := handlertest.UniqueOrder(t)
	// An unknown member is kept in the stored order, so this order cannot
	// fit the 2 MB a transactional batch may carry. (An array, which the host
	// does not copy into Metadata, keeps the request under 4 MB; 33 strings
	// of 64 KiB stay within the string length limit of docs/contract.md §3.)
	note := `"` + strings.Repeat("x", orders.MaxTokenBytes) + `"`
	notes := "[" + strings.TrimSuffix(strings.Repeat(note+",", 33), ",") + "]"
	huge := bytes.Replace(body, []byte(`"currency"`), []byte(`"notes":`+notes+`,"currency"`), 1)
	n := requests.count()

	a := s.invoke(t, hostInvocation(huge, id, 1))
	e := a.parked(t)
	if a.Status != http.StatusOK || e == nil {
		t.Fatalf("status %d, parked %v", a.Status, e != nil)
	}
	if e.Reason != orders.ValidationFailed || e.OrderID != id || !strings.Contains(e.Description, "2 MB") || !strings.Contains(e.Description, id) {
		t.Errorf("description %q does not say which limit and which order", e.Description)
	}
	t.Logf("parked: %s", e.Description)
	// The order is never sent; its 2 MB body, too large for the envelope,
	// is kept in parts beside where the order would be (docs/contract.md §6).
	for _, r := range requests.since(n) {
		if strings.HasPrefix(r, "BATCH") {
			t.Errorf("a batch over the limit was sent: %v", r)
		}
	}
	docs := partition(t, id)
	if e.BodyRef == nil || len(docs) < 2 || len(handlertest.DocumentsOfType(docs, orders.TypeParkedBody)) != len(docs) {
		t.Errorf("body ref %v; documents written: %d, want only the parts of the parked body", e.BodyRef, len(docs))
	}
}

// TestRoundTripsPerOutcome measures what each outcome costs in requests to
// Cosmos DB (figures for the README).
func TestRoundTripsPerOutcome(t *testing.T) {
	store, requests := countingStore(t)
	s := startServer(t, store, 0)
	id, body := handlertest.UniqueOrder(t)
	steps := []struct {
		name    string
		request []byte
		outcome string
		want    []string // request kinds, in order
	}{
		{"new order", hostInvocation(body, id, 1), "created", []string{"BATCH"}},
		{"duplicate", hostInvocation(body, id, 2), "duplicate", []string{"BATCH", "GET"}},
		{"mismatch", hostInvocation(mismatchOf(body), id, 1), "mismatch", []string{"BATCH", "GET", "POST"}},
		{"first status", statusInvocation(t, id, "Paid", 1, 1), "applied", []string{"POST"}},
		{"newer status", statusInvocation(t, id, "Shipped", 2, 1), "applied", []string{"POST", "GET", "PUT"}},
		{"stale status", statusInvocation(t, id, "Paid", 1, 2), "stale", []string{"POST", "GET"}},
	}
	for _, st := range steps {
		n := requests.count()
		a := s.invoke(t, st.request)
		if a.Status != http.StatusOK || a.Outcome() != st.outcome {
			t.Fatalf("%s: status %d, logs %v", st.name, a.Status, a.Logs)
		}
		sent := requests.since(n)
		kinds := make([]string, len(sent))
		for i, r := range sent {
			kinds[i] = strings.Fields(r)[0]
		}
		t.Logf("%-12s %d round trip(s): %v", st.name, len(sent), sent)
		if strings.Join(kinds, " ") != strings.Join(st.want, " ") {
			t.Errorf("%s: requests %v, want %v", st.name, kinds, st.want)
		}
	}
}
