package handler

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ordersink/orders-consumer/orders"
	"github.com/ordersink/orders-consumer/orders/orderstest"
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
	run := fmt.Sprint(time.Now().UnixNano())
	b, h, l := "B-"+run, "H-"+run, "L-"+run
	broken := json.RawMessage(`{"id":"` + b + `:event:OrderAccepted","orderId":"` + b + `","type":"outboxEvent","eventId":"` + b + `:event:OrderAccepted","eventType":"OrderAccepted"}`)
	// An event written before the size budget: 24,000 zeros indent to ~300 KB.
	// Its text fits an envelope; one with a 300 KB note does not.
	huge := outboxDoc(h, 24000)
	long := outboxDocWith(l, 1, strings.Repeat("n", 300<<10))
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
		case b:
			if e.Body != string(broken) || e.BodyRef != nil || !strings.Contains(e.Description, "payload") || len(partition(t, b)) != 0 {
				t.Errorf("broken document: %s", describe(&e))
			}
		case h:
			if e.Body != string(huge) || e.BodySHA256 != orders.BodySHA256(huge) || !strings.Contains(e.Description, "over the budget") || len(partition(t, h)) != 0 {
				t.Errorf("oversized event: %s", describe(&e))
			}
		case l:
			// The outbox document expires (orders.OutboxEventTTL); the
			// envelope points at a parked body, which does not.
			if e.Body != "" || e.BodyRef == nil || e.BodyRef.ID != parkedBodyID(long) || e.BodyRef.PartitionKey != l ||
				e.BodySHA256 != orders.BodySHA256(long) || e.MessageID != l+":event:OrderAccepted" {
				t.Fatalf("oversized document: %s", describe(&e))
			}
			doc := parkedBodyDoc(t, e.BodyRef)
			if doc["body"] != string(long) || doc["ttl"] != float64(orders.ParkedBodyTTL) || doc["reason"] != string(orders.Unpublishable) ||
				doc["messageId"] != e.MessageID {
				t.Errorf("parked body: ttl %v reason %v messageId %v, holds the document: %v", doc["ttl"], doc["reason"], doc["messageId"], doc["body"] == string(long))
			}
		default:
			t.Errorf("unexpected envelope %s", describe(&e))
		}
	}
	logs := s.Logs.String()
	if !strings.Contains(logs, `"level":"ERROR","msg":"outbox event not publishable"`) || !strings.Contains(logs, `"unpublishable":3`) {
		t.Errorf("not logged at ERROR and counted: %s", logs)
	}
}

// parkedBodyID is the id of the parked body that keeps body.
func parkedBodyID(body []byte) string {
	return orders.NewParkedBody(body, "", "", "", time.Time{}).ID()
}

// A set-aside event too large for its envelope is kept as a parked body once,
// however often its batch is delivered: two deliveries at once and a retry
// after them answer the same envelope and leave one copy of the body (in
// parts when it is over a document's budget), against the Cosmos emulator.
func TestPublisherKeepsASetAsideEventOnceAcrossRetries(t *testing.T) {
	store, requests := countingStore(t)
	s := budgetServer(t, Config{Processor: &orders.Processor{Store: store}})
	run := fmt.Sprint(time.Now().UnixNano())
	long := outboxDocWith("L-"+run, 1, strings.Repeat("n", 300<<10))
	parts := outboxDocWith("P-"+run, 1, strings.Repeat("p", 1600<<10))
	batch := hostChangeFeed([]json.RawMessage{long, parts, outboxDoc("A-"+run, 1)})

	answers := make([]answer, 3)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i := range 2 {
		wg.Go(func() { answers[i], errs[i] = s.call(FunctionPublishOrderEvents, batch) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	n := requests.count()
	answers[2] = s.invokeFunction(t, FunctionPublishOrderEvents, batch)
	// A retry costs one create per document of the bodies, each answered 409.
	if got := requests.since(n); len(got) != 3 || !strings.HasPrefix(got[0], "POST") || !strings.HasPrefix(got[2], "POST") {
		t.Errorf("the retry sent %v, want the 3 creates of the parked bodies' documents", got)
	}
	var envelopes []ParkingEnvelope
	for i, a := range answers {
		var got []ParkingEnvelope
		if err := json.Unmarshal(a.Outputs[ParkingBinding], &got); a.Status != http.StatusOK || err != nil || len(got) != 2 || len(a.published(t)) != 1 {
			t.Fatalf("delivery %d: status %d, parking %.200s", i, a.Status, a.Outputs[ParkingBinding])
		}
		for k := range got {
			if got[k].BodyRef == nil || envelopes != nil && *got[k].BodyRef != *envelopes[k].BodyRef {
				t.Fatalf("delivery %d, envelope %d points elsewhere: %s", i, k, describe(&got[k]))
			}
		}
		envelopes = got
	}
	for k, doc := range []json.RawMessage{long, parts} {
		e := envelopes[k]
		if e.BodyRef == nil || e.BodyRef.ID != parkedBodyID(doc) {
			t.Fatalf("envelope %d: %s", k, describe(&e))
		}
		stored, err := testStore(t).PartitionDocuments(context.Background(), e.BodyRef.PartitionKey)
		if err != nil {
			t.Fatal(err)
		}
		want, err := orders.NewParkedBody(doc, "", "", "", time.Time{}).Documents()
		if err != nil {
			t.Fatal(err)
		}
		body, err := orders.JoinParkedBody(stored, e.BodySHA256)
		if err != nil || string(body) != string(doc) || len(stored) != len(want) || (k == 1) != (len(want) > 1) {
			t.Errorf("envelope %d: %d documents in partition %s, want the %d of the body once; joined: %v", k, len(stored), e.BodyRef.PartitionKey, len(want), err)
		}
	}
}

// bodyStoreFunc is a BodyStore of one function.
type bodyStoreFunc func(ctx context.Context, p orders.ParkedBody) error

func (f bodyStoreFunc) ParkBody(ctx context.Context, p orders.ParkedBody) error { return f(ctx, p) }

// A set-aside event whose parked body cannot be written fails the
// invocation, at MessageDeadline when the store does not answer, at once
// when it refuses: the retry policy delivers the batch again, and nothing
// of it is sent or said sent before then. On virtual time.
func TestPublisherFailsWhenTheSetAsideBodyIsNotKept(t *testing.T) {
	const deadline = 300 * time.Millisecond
	long := outboxDocWith("L", 1, strings.Repeat("n", 300<<10))
	for name, tc := range map[string]struct {
		store bodyStoreFunc
		took  time.Duration
	}{
		"refused": {func(context.Context, orders.ParkedBody) error {
			return &orders.StoreError{Op: "park body", Status: http.StatusServiceUnavailable, IsTransient: true, Err: errors.New("503 Service Unavailable")}
		}, 0},
		"no answer": {func(ctx context.Context, _ orders.ParkedBody) error {
			<-ctx.Done()
			return ctx.Err()
		}, deadline},
	} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := startServerIn(t, Config{Processor: &orders.Processor{Store: orderstest.NewMemStore()}, Bodies: tc.store, MessageDeadline: deadline})
				start := time.Now()
				// The host sends no output of a failed invocation; an inline
				// set-aside before the failing one is not said to be parked.
				a := s.invokeFunction(t, FunctionPublishOrderEvents, hostChangeFeed([]json.RawMessage{outboxDoc("A", 1), outboxDoc("H", 24000), long}))
				if took := time.Since(start); a.Status != http.StatusInternalServerError || took != tc.took {
					t.Fatalf("status %d after %s, want 500 after %s", a.Status, took, tc.took)
				}
				logs := s.Logs.String()
				if !strings.Contains(logs, `"msg":"outbox event not set aside, the batch will be retried"`) ||
					!strings.Contains(logs, `document 2: set aside outbox event \"L:event:OrderAccepted\"`) ||
					strings.Contains(logs, `"msg":"outbox event not publishable"`) || strings.Contains(logs, `"msg":"publish"`) {
					t.Errorf("the log does not say what failed, or says something was set aside or sent: %s", logs)
				}
			})
		})
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
