package handler

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ordersink/orders-consumer/cosmos"
	"github.com/ordersink/orders-consumer/handler/handlertest"
	"github.com/ordersink/orders-consumer/internal/loopback"
	"github.com/ordersink/orders-consumer/orders"
	"github.com/ordersink/orders-consumer/orders/orderstest"
)

func TestProcessOrderCreatedThenDuplicates(t *testing.T) {
	s := startServer(t, testStore(t), 0)
	id, body := handlertest.UniqueOrder(t)

	a := s.invoke(t, hostInvocation(body, id, 1))
	if a.Status != http.StatusOK || a.parked(t) != nil {
		t.Fatalf("new order: status %d, parked %+v", a.Status, a.parked(t))
	}
	if !strings.Contains(a.FirstLog(), "created "+id) {
		t.Errorf("log line %q does not say created", a.FirstLog())
	}
	stored := handlertest.DocumentsOfType(partition(t, id), orders.TypeOrder)
	if len(stored) != 1 {
		t.Fatalf("orders stored = %d, want 1", len(stored))
	}
	doc := stored[0]
	if doc["id"] != id || doc["orderId"] != id || doc["messageId"] != id || doc["hashVersion"] != float64(1) ||
		doc["total"] != "44.98" || doc["customerId"] != "CUST-42" || doc["acceptedAt"] == nil {
		t.Errorf("stored document = %v", doc)
	}
	hash := doc["requestHash"]

	t.Run("same body, DeliveryCount 2", func(t *testing.T) {
		a := s.invoke(t, hostInvocation(body, id, 2))
		if a.Status != http.StatusOK || a.parked(t) != nil || !strings.Contains(a.FirstLog(), "duplicate") {
			t.Fatalf("status %d, parked %+v, logs %v", a.Status, a.parked(t), a.Logs)
		}
	})
	t.Run("only meta changed", func(t *testing.T) {
		b := bytes.Replace(body, []byte(`"producer":"web-shop"`), []byte(`"producer":"retry-job","attempt":4`), 1)
		a := s.invoke(t, hostInvocation(b, id, 1))
		if a.Status != http.StatusOK || a.parked(t) != nil || !strings.Contains(a.FirstLog(), "duplicate") {
			t.Fatalf("status %d, parked %+v, logs %v", a.Status, a.parked(t), a.Logs)
		}
	})
	// The order and its OrderAccepted outbox event, written together.
	docs := partition(t, id)
	if o := handlertest.DocumentsOfType(docs, orders.TypeOrder); len(docs) != 2 || len(o) != 1 || o[0]["requestHash"] != hash ||
		len(handlertest.DocumentsOfType(docs, orders.TypeOutboxEvent)) != 1 {
		t.Errorf("duplicates changed the partition: %v", docs)
	}
}

func TestProcessOrderMismatchIsParkedAndStoredOrderUntouched(t *testing.T) {
	s := startServer(t, testStore(t), 0)
	id, body := s.created(t)
	before := storedOrder(t, id)

	other := bytes.Replace(body, []byte(`"quantity":1,"unitPrice":"5.00"`), []byte(`"quantity":2,"unitPrice":"5.00"`), 1)
	other = bytes.Replace(other, []byte(`"44.98"`), []byte(`"49.98"`), 1)
	a := s.invoke(t, hostInvocation(other, id, 1))
	e := a.parked(t)
	if a.Status != http.StatusOK || e == nil {
		t.Fatalf("status %d, parked %v", a.Status, e)
	}
	if e.Reason != orders.HashMismatch || e.OrderID != id || e.MessageID != id || e.DeliveryCount != 1 ||
		e.StoredHash != before["requestHash"] || e.IncomingHash == "" || e.IncomingHash == e.StoredHash ||
		e.Body != string(other) || e.Function != FunctionProcessOrder || e.InvocationID == "" || e.ParkedAt.IsZero() ||
		!strings.Contains(e.Description, "different payload") {
		t.Errorf("envelope = %+v", e)
	}
	docs := partition(t, id)
	after := handlertest.DocumentsOfType(docs, orders.TypeOrder)
	if len(after) != 1 || fmt.Sprint(after[0]) != fmt.Sprint(before) {
		t.Errorf("stored order changed:\nbefore %v\nafter  %v", before, after)
	}
	if c := handlertest.DocumentsOfType(docs, orders.TypeConflict); len(c) != 1 || c[0]["incomingHash"] != e.IncomingHash {
		t.Errorf("conflict records = %v", c)
	}
	if logs := s.logsOf(a); !strings.Contains(logs, `"level":"ERROR"`) || !strings.Contains(logs, `"reason":"HashMismatch"`) {
		t.Errorf("no alarm line in the invocation's log: %s", logs)
	}
}

func TestProcessOrderBadInputIsParkedAndNothingWritten(t *testing.T) {
	s := startServer(t, testStore(t), 0)
	id, body := handlertest.UniqueOrder(t)
	invalid := bytes.Replace(body, []byte(`"unitPrice":"19.99"`), []byte(`"unitPrice":19.99`), 1)
	shadowing := bytes.Replace(body, []byte(`"currency"`), []byte(`"DeliveryCount":1,"currency"`), 1)
	tests := []struct {
		name    string
		request []byte
		reason  orders.Reason
		mention string
	}{
		{"not JSON", hostInvocation([]byte(`{"orderId":"`+id+`",`), id, 1), orders.MalformedMessage, "not valid JSON"},
		{"float money", hostInvocation(invalid, id, 1), orders.ValidationFailed, "lines[0].unitPrice"},
		{"body shadows DeliveryCount (string trigger)", hostStringInvocation(shadowing, id, 5), orders.ValidationFailed, "DeliveryCount"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := s.invoke(t, tc.request)
			e := a.parked(t)
			if a.Status != http.StatusOK || e == nil {
				t.Fatalf("status %d, parked %v", a.Status, e)
			}
			if e.Reason != tc.reason || !strings.Contains(e.Description, tc.mention) {
				t.Errorf("reason %s %q, want %s mentioning %q", e.Reason, e.Description, tc.reason, tc.mention)
			}
			if e.Body == "" {
				t.Error("envelope lost the message body")
			}
		})
	}
	if docs := partition(t, id); len(docs) != 0 {
		t.Errorf("bad input wrote %d documents", len(docs))
	}
}

// An invocation the handler cannot decode is not the message's fault (the
// host always sends a well-formed envelope): failing keeps the message whole
// in the broker, where parking would keep only what the request shows.
func TestProcessOrderUndecodableInvocationIsRetried(t *testing.T) {
	s := startServer(t, orderstest.NewMemStore(), 0)
	tests := []struct {
		name    string
		request []byte
		mention string
	}{
		{"envelope without Data", []byte(`{"Metadata":{}}`), "no Data"},
		{"envelope not JSON", []byte(`<xml/>`), "invocation envelope"},
		{"binding renamed", []byte(`{"Data":{"msg":"\"{}\""},"Metadata":{}}`), `no \"message\" member`},
		{"trigger value null", []byte(`{"Data":{"message":null},"Metadata":{}}`), "null"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := s.invoke(t, tc.request)
			if a.Status/100 == 2 {
				t.Fatalf("status %d: the message would be completed", a.Status)
			}
			if logs := s.logsOf(a); !strings.Contains(logs, `"level":"ERROR"`) || !strings.Contains(logs, tc.mention) {
				t.Errorf("no ERROR line naming %q: %s", tc.mention, logs)
			}
		})
	}
}

func TestProcessOrderConcurrentDeliveriesOfOneNewOrder(t *testing.T) {
	s := startServer(t, testStore(t), 0)
	id, body := handlertest.UniqueOrder(t)
	const n = 32
	answers := make([]answer, n)
	errs := make([]error, n)
	request := hostInvocation(body, id, 1)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			answers[i], errs[i] = s.call(FunctionProcessOrder, request)
		}()
	}
	close(start)
	wg.Wait()
	outcomes := map[string]int{}
	for i, a := range answers {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		if a.Status != http.StatusOK {
			t.Errorf("status %d", a.Status)
		}
		if a.parked(t) != nil {
			t.Errorf("parked: %+v", a.parked(t))
		}
		outcomes[a.Outcome()]++
	}
	if outcomes["created"] != 1 || outcomes["duplicate"] != n-1 {
		t.Errorf("outcomes = %v, want 1 created and %d duplicate", outcomes, n-1)
	}
	docs := partition(t, id)
	if len(docs) != 2 || len(handlertest.DocumentsOfType(docs, orders.TypeOrder)) != 1 || len(handlertest.DocumentsOfType(docs, orders.TypeOutboxEvent)) != 1 {
		t.Errorf("documents = %d, want exactly the order and its outbox event", len(docs))
	}
}

// unreachableStore is a Store whose endpoint refuses connections.
func unreachableStore(t *testing.T) orders.Store {
	t.Helper()
	port, err := loopback.FreePort() // nothing listens there now
	if err != nil {
		t.Fatal(err)
	}
	store, err := cosmos.Open(cosmos.Options{Endpoint: fmt.Sprintf("http://127.0.0.1:%d/", port), Key: "a2V5"}, "shop", "orders")
	if err != nil {
		t.Fatal(err)
	}
	return store
}

func TestProcessOrderCosmosUnreachable(t *testing.T) {
	s := startServer(t, unreachableStore(t), 3*time.Second)
	id, body := handlertest.UniqueOrder(t)

	a := s.invoke(t, hostInvocation(body, id, 1))
	if a.Status/100 == 2 {
		t.Fatalf("status %d: a transient failure must not complete the message", a.Status)
	}
	if logs := s.logsOf(a); !strings.Contains(logs, `"outcome":"transient"`) {
		t.Errorf("log does not record the transient outcome: %s", logs)
	}

	t.Run("retry budget exhausted", func(t *testing.T) {
		a := s.invoke(t, hostInvocation(body, id, orders.DefaultRetryBudget))
		e := a.parked(t)
		if a.Status != http.StatusOK || e == nil || e.Reason != orders.RetryBudgetExhausted || e.DeliveryCount != orders.DefaultRetryBudget || e.OrderID != id {
			t.Fatalf("status %d, envelope %+v", a.Status, e)
		}
		if !strings.Contains(e.Description, "create order "+id) {
			t.Errorf("description %q does not name the operation and order", e.Description)
		}
	})
}

func TestStructuredLogLine(t *testing.T) {
	s := startServer(t, testStore(t), 0)
	id, body := handlertest.UniqueOrder(t)
	s.invoke(t, hostInvocation(body, id, 1))
	var line map[string]any
	if err := json.Unmarshal([]byte(strings.TrimSpace(s.Logs.String())), &line); err != nil {
		t.Fatalf("log is not one JSON line: %q", s.Logs.String())
	}
	for _, k := range []string{"invocationId", "messageId", "orderId", "outcome", "deliveryCount", "durationMs", "function"} {
		if _, ok := line[k]; !ok {
			t.Errorf("log line lacks %s: %v", k, line)
		}
	}
	if line["orderId"] != id || line["outcome"] != "created" {
		t.Errorf("log line = %v", line)
	}
}
