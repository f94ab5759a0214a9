package handler

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/ordersink/orders-consumer/handler/handlertest"
	"github.com/ordersink/orders-consumer/orders"
	"github.com/ordersink/orders-consumer/orders/orderstest"
)

// storedStatus reads an order's status document, nil when there is none.
func storedStatus(t *testing.T, orderID string) map[string]any {
	t.Helper()
	s := handlertest.DocumentsOfType(partition(t, orderID), orders.TypeOrderStatus)
	switch len(s) {
	case 0:
		return nil
	case 1:
		return s[0]
	}
	t.Fatalf("%d status documents for %s", len(s), orderID)
	return nil
}

func TestOrderStatusChangedAppliesOnlyNewerVersions(t *testing.T) {
	s := startServer(t, testStore(t), 0)
	id, _ := s.created(t)
	steps := []struct {
		name          string
		status        string
		version       int64
		delivery      int
		outcome       string
		storedStatus  string
		storedVersion float64
	}{
		{"first status", "Paid", 2, 1, "applied", "Paid", 2},
		{"same message redelivered", "Paid", 2, 2, "stale", "Paid", 2},
		{"older version arrives late", "Placed", 1, 1, "stale", "Paid", 2},
		{"newer version", "Shipped", 5, 1, "applied", "Shipped", 5},
		{"same version, other status", "Cancelled", 5, 1, "stale", "Shipped", 5},
		{"skipped versions are fine", "Delivered", 9, 1, "applied", "Delivered", 9},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			a := s.invoke(t, statusInvocation(t, id, st.status, st.version, st.delivery))
			if a.Status != http.StatusOK || a.parked(t) != nil || a.Outcome() != st.outcome {
				t.Fatalf("status %d, parked %v, logs %v; want %s", a.Status, a.parked(t) != nil, a.Logs, st.outcome)
			}
			got := storedStatus(t, id)
			if got["status"] != st.storedStatus || got["version"] != st.storedVersion || got["type"] != orders.TypeOrderStatus {
				t.Errorf("stored status = %v, want %s v%v", got, st.storedStatus, st.storedVersion)
			}
		})
	}
	// Stale messages are counted: each has its own log line with both versions.
	var stale, conflicts int
	for _, line := range strings.Split(strings.TrimSpace(s.Logs.String()), "\n") {
		var l map[string]any
		_ = json.Unmarshal([]byte(line), &l)
		if l["outcome"] == "stale" {
			stale++
			if l["version"] == nil || l["storedVersion"] == nil || l["messageType"] != string(orders.OrderStatusChanged) {
				t.Errorf("stale line lacks versions: %s", line)
			}
			if l["level"] == "WARN" {
				conflicts++
			}
		}
	}
	if stale != 3 || conflicts != 1 {
		t.Errorf("stale lines = %d (want 3), of which warnings = %d (want 1, the same-version conflict)", stale, conflicts)
	}
	if orderDocs := handlertest.DocumentsOfType(partition(t, id), orders.TypeOrder); len(orderDocs) != 1 {
		t.Errorf("order documents = %d", len(orderDocs))
	}
}

// A status change may overtake its order (other producer, parallel
// consumers): the status is its own document, so it is applied at once and
// the order is accepted normally when it comes.
func TestOrderStatusChangedBeforeTheOrder(t *testing.T) {
	s := startServer(t, testStore(t), 0)
	id, body := handlertest.UniqueOrder(t)
	if a := s.invoke(t, statusInvocation(t, id, "Paid", 1, 1)); a.Status != http.StatusOK || a.Outcome() != "applied" {
		t.Fatalf("status first: %d %v", a.Status, a.Logs)
	}
	if a := s.invoke(t, hostInvocation(body, id, 1)); a.Status != http.StatusOK || a.Outcome() != "created" {
		t.Fatalf("order after its status: %d %v", a.Status, a.Logs)
	}
	docs := partition(t, id)
	for _, typ := range []string{orders.TypeOrder, orders.TypeOutboxEvent, orders.TypeOrderStatus} {
		if n := len(handlertest.DocumentsOfType(docs, typ)); n != 1 {
			t.Errorf("%s documents = %d, want 1", typ, n)
		}
	}
}

func TestOrderStatusChangedBadInputIsParked(t *testing.T) {
	s := startServer(t, testStore(t), 0)
	id, _ := handlertest.UniqueOrder(t)
	withStatus := func(body string) []byte {
		return withSubject(t, hostInvocation([]byte(body), id+":status", 1), "OrderStatusChanged")
	}
	tests := []struct {
		name    string
		request []byte
		mention string
	}{
		{"version as a string", withStatus(`{"orderId":"` + id + `","status":"Paid","version":"3","changedAt":"2026-11-29T12:00:00Z"}`), "version"},
		{"version zero", withStatus(`{"orderId":"` + id + `","status":"Paid","version":0,"changedAt":"2026-11-29T12:00:00Z"}`), "version"},
		{"version a fraction", withStatus(`{"orderId":"` + id + `","status":"Paid","version":2.5,"changedAt":"2026-11-29T12:00:00Z"}`), "version"},
		{"no changedAt", withStatus(`{"orderId":"` + id + `","status":"Paid","version":3}`), "changedAt"},
		{"status with a space", withStatus(`{"orderId":"` + id + `","status":"Paid in full","version":3,"changedAt":"2026-11-29T12:00:00Z"}`), "status"},
		{"an order sent as a status change", withStatus(orderstest.ExampleBody), "status"},
		{"a status body under another Subject is judged as an order", withSubject(t, hostInvocation(statusBody(id, "Paid", 3), id, 1), "OrderShipped"), "customerId"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := s.invoke(t, tc.request)
			e := a.parked(t)
			if a.Status != http.StatusOK || e == nil {
				t.Fatalf("status %d, parked %v", a.Status, e)
			}
			if e.Reason != orders.ValidationFailed || !strings.Contains(e.Description, tc.mention) {
				t.Errorf("reason %s %q, want ValidationFailed mentioning %q", e.Reason, e.Description, tc.mention)
			}
		})
	}
	if docs := partition(t, id); len(docs) != 0 {
		t.Errorf("bad status messages wrote %d documents", len(docs))
	}
}

// TestConcurrentStatusChangesEndAtHighestVersion delivers versions 1..n of
// one order at once, in random order, and redelivers any that fail
// transiently (a lost race past the attempt bound) as the broker would.
// It relies on If-Match: the vercel emulator and real Cosmos DB honour it.
func TestConcurrentStatusChangesEndAtHighestVersion(t *testing.T) {
	s := startServer(t, testStore(t), 0)
	id, _ := handlertest.UniqueOrder(t)
	const n = 8
	versions := rand.Perm(n)
	outcomes := make([]string, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i, v := range versions {
		version := int64(v + 1)
		requests := make([][]byte, 5)
		for d := range requests {
			requests[d] = statusInvocation(t, id, fmt.Sprintf("S%d", version), version, d+1)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for _, request := range requests {
				a, err := s.call(FunctionProcessOrder, request)
				if err != nil {
					outcomes[i] = err.Error()
					return
				}
				if a.Status == http.StatusOK {
					outcomes[i] = a.Outcome()
					return
				}
			}
			outcomes[i] = "never completed"
		}()
	}
	close(start)
	wg.Wait()
	count := map[string]int{}
	for i, o := range outcomes {
		count[o]++
		if versions[i]+1 == n && o != "applied" {
			t.Errorf("the highest version ended %s", o)
		}
	}
	if count["applied"]+count["stale"] != n {
		t.Errorf("outcomes = %v", count)
	}
	got := storedStatus(t, id)
	if got["version"] != float64(n) || got["status"] != fmt.Sprintf("S%d", n) {
		t.Errorf("stored status = %v, want S%d v%d (outcomes %v)", got, n, n, count)
	}
	maxAttempts := 0.0
	for _, line := range strings.Split(strings.TrimSpace(s.Logs.String()), "\n") {
		var l map[string]any
		_ = json.Unmarshal([]byte(line), &l)
		if a, ok := l["attempts"].(float64); ok && a > maxAttempts {
			maxAttempts = a
		}
	}
	t.Logf("versions in start order %v: %v; most conditional-write attempts of one message: %v", versions, count, maxAttempts)
}

// Service Bus extension 4.x sends the Subject as Label only.
func TestMessageTypeFromLabelAlone(t *testing.T) {
	s := startServer(t, testStore(t), 0)
	id, _ := handlertest.UniqueOrder(t)
	var inv map[string]map[string]json.RawMessage
	_ = json.Unmarshal(statusInvocation(t, id, "Paid", 1, 1), &inv)
	delete(inv["Metadata"], "Subject")
	single, _ := json.Marshal(inv)
	if a := s.invoke(t, single); a.Status != http.StatusOK || a.Outcome() != "applied" {
		t.Fatalf("single message with Label only: %d %v", a.Status, a.Logs)
	}

	_ = json.Unmarshal(hostBatch([]batchMessage{{statusBody(id, "Shipped", 2), id + ":status:2", 1, "OrderStatusChanged"}}), &inv)
	delete(inv["Metadata"], "SubjectArray")
	batch, _ := json.Marshal(inv)
	if a := s.invokeFunction(t, FunctionProcessOrderBatch, batch); a.Status != http.StatusOK || !strings.Contains(a.FirstLog(), "applied") {
		t.Fatalf("batch with LabelArray only: %d %v", a.Status, a.Logs)
	}
	if got := storedStatus(t, id); got["version"] != float64(2) {
		t.Errorf("stored status = %v", got)
	}
}
