package handler

import (
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/ordersink/orders-consumer/orders"
)

// outboxDoc is a stored OrderAccepted outbox event whose payload carries k
// zeros in a list, which the host indents to a line each.
func outboxDoc(orderID string, k int) json.RawMessage { return outboxDocWith(orderID, k, "") }

// outboxDocWith adds a note of that text to the payload.
func outboxDocWith(orderID string, k int, note string) json.RawMessage {
	id := orders.EventID(orderID, orders.EventOrderAccepted)
	zeros := strings.TrimSuffix(strings.Repeat("0,", k), ",")
	return json.RawMessage(`{"id":"` + id + `","orderId":"` + orderID + `","type":"outboxEvent","eventId":"` + id +
		`","idempotencyKey":"` + id + `","eventType":"OrderAccepted","occurredAt":"2026-11-29T10:00:02Z","payload":{"orderId":"` +
		orderID + `","note":"` + note + `","lines":[{"x":[` + zeros + `]}]},"ttl":2592000}`)
}

// TestPublisherSetsPoisonAside: a document the publisher can never send is
// parked with its reason (and counted and logged at ERROR); its batch-mates
// are published, and the invocation succeeds, so the lease moves on.
func TestPublisherSetsPoisonAside(t *testing.T) {
	s := startServer(t, testEnv(t).Store, 0)
	broken := json.RawMessage(`{"id":"B:event:OrderAccepted","orderId":"B","type":"outboxEvent","eventId":"B:event:OrderAccepted","eventType":"OrderAccepted"}`)
	// An event written before the size budget: 24,000 zeros indent to ~300 KB.
	// Its text fits an envelope; one with a 300 KB note does not.
	huge := outboxDoc("H", 24000)
	long := outboxDocWith("L", 1, strings.Repeat("n", 300<<10))
	a := s.invokeFunction(t, FunctionPublishOrderEvents, hostChangeFeed([]json.RawMessage{outboxDoc("A", 1), broken, huge, long, outboxDoc("C", 1)}))
	if a.Status != http.StatusOK {
		t.Fatalf("status %d", a.Status)
	}
	if got := eventIDs(t, a.published(t)); strings.Join(got, " ") != "A:event:OrderAccepted C:event:OrderAccepted" {
		t.Errorf("published %v, want A and C", got)
	}
	var parked []json.RawMessage
	if err := json.Unmarshal(a.Outputs[ParkingBinding], &parked); err != nil || len(parked) != 3 {
		t.Fatalf("parking output %.300s", a.Outputs[ParkingBinding])
	}
	budget := OutputBudget(0)
	for i, raw := range parked {
		var e ParkingEnvelope
		_ = json.Unmarshal(raw, &e)
		if err := budget(json.RawMessage(raw)); err != nil {
			t.Errorf("envelope %d: %v", i, err)
		}
		if e.Reason != orders.Unpublishable || e.Function != FunctionPublishOrderEvents {
			t.Errorf("envelope %d: %s", i, describe(&e))
		}
		switch e.OrderID {
		case "B":
			if e.Body != string(broken) || e.BodyRef != nil || !strings.Contains(e.Description, "payload") {
				t.Errorf("broken document: %s", describe(&e))
			}
		case "H":
			if e.Body != string(huge) || e.BodySHA256 != orders.BodySHA256(huge) || !strings.Contains(e.Description, "over the budget") {
				t.Errorf("oversized event: %s", describe(&e))
			}
		case "L":
			if e.Body != "" || e.BodyRef == nil || e.BodyRef.ID != "L:event:OrderAccepted" || e.BodyRef.PartitionKey != "L" ||
				e.BodySHA256 != orders.BodySHA256(long) {
				t.Errorf("oversized document: %s", describe(&e))
			}
		default:
			t.Errorf("unexpected envelope %s", describe(&e))
		}
	}
	logs := s.logs.String()
	if !strings.Contains(logs, `"level":"ERROR","msg":"outbox event not publishable"`) || !strings.Contains(logs, `"unpublishable":3`) {
		t.Errorf("not logged at ERROR and counted: %s", logs)
	}
}

// The publisher's binding: it reads the change feed from the beginning
// (events written before its leases existed are published; consumers
// deduplicate on eventId), retries a failed invocation a bounded number of
// times, and can park what it sets aside.
func TestPublisherBinding(t *testing.T) {
	raw, err := os.ReadFile("../PublishOrderEvents/function.json")
	if err != nil {
		t.Fatal(err)
	}
	var fn struct {
		Retry struct {
			MaxRetryCount int `json:"maxRetryCount"`
		} `json:"retry"`
		Bindings []struct {
			Name               string `json:"name"`
			Type               string `json:"type"`
			QueueName          string `json:"queueName"`
			StartFromBeginning *bool  `json:"startFromBeginning"`
		} `json:"bindings"`
	}
	if err := json.Unmarshal(raw, &fn); err != nil {
		t.Fatal(err)
	}
	if fn.Retry.MaxRetryCount < 1 || fn.Retry.MaxRetryCount > 50 {
		t.Errorf("maxRetryCount %d: want a bounded retry", fn.Retry.MaxRetryCount)
	}
	found := map[string]bool{}
	for _, b := range fn.Bindings {
		switch b.Name {
		case DocumentsBinding:
			found[b.Name] = b.StartFromBeginning != nil && *b.StartFromBeginning
		case ParkingBinding:
			found[b.Name] = b.Type == "serviceBus" && b.QueueName == "orders-deadletter"
		}
	}
	if !found[DocumentsBinding] || !found[ParkingBinding] {
		t.Errorf("startFromBeginning true: %v; parking output to orders-deadletter: %v", found[DocumentsBinding], found[ParkingBinding])
	}
}
