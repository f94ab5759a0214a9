package handler

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/ordersink/orders-consumer/idempotency"
	"github.com/ordersink/orders-consumer/orders"
)

func decodeState(t *testing.T, a callerAnswer) orderState {
	t.Helper()
	if a.StatusCode != http.StatusOK || a.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("GET: %d %q %s", a.StatusCode, a.Header.Get("Content-Type"), a.Body)
	}
	var s orderState
	if err := json.Unmarshal(a.Body, &s); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestGetOrderFollowsAnOrderFromSubmissionToConflict(t *testing.T) {
	d := startFrontDoor(t)
	id, body := uniqueOrder(t)
	o, err := orders.ParseOrder(body)
	if err != nil {
		t.Fatal(err)
	}

	p := wantProblem(t, d.get(t, id, nil), http.StatusNotFound, "order-not-found")
	if p.Instance != ordersPath+"/"+id {
		t.Errorf("instance %q", p.Instance)
	}

	sub := d.submit(t, "get-"+id, body)
	s := decodeState(t, d.get(t, id, nil))
	if s.OrderID != id || s.State != "submitted" || s.RequestHash != o.Hash || s.AcceptedAt != "" || len(s.Conflicts) != 0 {
		t.Errorf("submitted: %+v", s)
	}
	// Only its submitter sees an order still on its way.
	wantProblem(t, d.get(t, id, http.Header{"X-Functions-Key": {"partner-b-function-key"}}), http.StatusNotFound, "order-not-found")

	d.deliver(t, sub)
	s = decodeState(t, d.get(t, id, nil))
	if s.State != "accepted" || s.RequestHash != o.Hash || s.MessageID != orders.MessageID(id, body) || s.AcceptedAt == "" ||
		s.Status != nil || s.Conflicts == nil || len(s.Conflicts) != 0 {
		t.Errorf("accepted: %+v", s)
	}
	// Anyone may read an accepted order (docs/http-api.md).
	if s := decodeState(t, d.get(t, id, http.Header{"X-Functions-Key": {"partner-b-function-key"}})); s.State != "accepted" {
		t.Errorf("another client: %+v", s)
	}

	changed := bytes.Replace(body, []byte(`"CUST-42"`), []byte(`"CUST-99"`), 1)
	if a := d.invoke(t, hostInvocation(changed, orders.MessageID(id, changed), 1)); a.parked(t) == nil {
		t.Fatalf("a changed resend is not parked: %v", a.Logs)
	}
	if a := d.invoke(t, statusInvocation(t, id, "Shipped", 2, 1)); a.Status != http.StatusOK {
		t.Fatalf("status change: %d", a.Status)
	}
	s = decodeState(t, d.get(t, id, nil))
	ch, _ := orders.ParseOrder(changed)
	if len(s.Conflicts) != 1 || s.Conflicts[0].IncomingHash != ch.Hash || s.Conflicts[0].DetectedAt == "" {
		t.Errorf("conflicts %+v, want the changed resend", s.Conflicts)
	}
	if s.Status == nil || s.Status.Status != "Shipped" || s.Status.Version != 2 {
		t.Errorf("status %+v", s.Status)
	}
	if strings.Contains(string(d.get(t, id, nil).Body), "CUST-99") {
		t.Error("GET shows a conflicting body")
	}
}

func TestGetOrderUnknownOrImpossibleIDs(t *testing.T) {
	d := startFrontDoor(t)
	for _, id := range []string{"ORD-never-seen-" + strings.Repeat("0", 8), strings.Repeat("x", 256), " padded"} {
		wantProblem(t, d.get(t, id, nil), http.StatusNotFound, "order-not-found")
	}
}

// failingReader is an order store that cannot be read.
type failingReader struct{ err error }

func (f failingReader) ViewDocuments(context.Context, string) ([]json.RawMessage, error) {
	return nil, f.err
}

func TestGetOrderStoreDown(t *testing.T) {
	for _, tc := range []struct {
		name   string
		err    error
		status int
		anchor string
	}{
		{"transient", &orders.StoreError{Op: "read order", Status: 503, Transient: true, Err: errors.New("503 sekrit activity 42")}, 503, "service-unavailable"},
		{"permanent", &orders.StoreError{Op: "read order", Status: 400, Err: errors.New("400 sekrit query")}, 500, "internal-error"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := startFrontDoor(t, func(c *Config) { c.Orders = failingReader{tc.err} })
			a := d.get(t, "ORD-1", nil)
			wantProblem(t, a, tc.status, tc.anchor)
			if a.Header.Get("Retry-After") == "" {
				t.Error("no Retry-After")
			}
			if !strings.Contains(d.logsOf(a.answer), "sekrit") {
				t.Errorf("the log lacks the store's error: %s", d.logsOf(a.answer))
			}
		})
	}
}

// Anyone with a function key can make an order collect conflicts (a new key
// and other content per submission, each parked as a HashMismatch with its
// body kept for 90 days). GET must stay bounded however many there are: it
// neither reads the kept bodies nor lists every conflict.
func TestGetOrderIsBoundedWhateverTheConflicts(t *testing.T) {
	d := startFrontDoor(t)
	id, body := uniqueOrder(t)
	d.deliver(t, d.submit(t, "bounded-"+id, body))
	const n = maxConflictsShown + 20
	note := strings.Repeat("n", 20<<10)
	for i := range n {
		changed := bytes.Replace(body, []byte(`"total"`), []byte(fmt.Sprintf(`"note":"%d %s","total"`, i, note)), 1)
		changed = bytes.Replace(changed, []byte(`"CUST-42"`), []byte(fmt.Sprintf(`"CUST-%d"`, 1000+i)), 1)
		if a := d.invoke(t, hostInvocation(changed, orders.MessageID(id, changed), 1)); a.parked(t) == nil {
			t.Fatalf("resend %d is not parked: %v", i, a.Logs)
		}
	}
	reader := &measuringReader{ViewReader: d.store}
	d.testServer = startServerWith(t, Config{Processor: &orders.Processor{Store: d.store},
		Idempotency: &idempotency.Service{Store: d.keys}, Orders: reader, Submissions: d.keys})
	a := d.get(t, id, nil)
	s := decodeState(t, a)
	if s.State != "accepted" || len(s.Conflicts) != maxConflictsShown || s.ConflictCount != n {
		t.Errorf("%d conflicts shown of %d counted, want %d of %d", len(s.Conflicts), s.ConflictCount, maxConflictsShown, n)
	}
	if len(a.Body) > 64<<10 {
		t.Errorf("the answer is %d bytes", len(a.Body))
	}
	if reader.bytes > 256<<10 {
		t.Errorf("GET read %d bytes of documents for %d conflicts: the kept bodies travel", reader.bytes, n)
	}
}

// measuringReader counts the bytes of documents GET reads.
type measuringReader struct {
	orders.ViewReader
	bytes int
}

func (m *measuringReader) ViewDocuments(ctx context.Context, orderID string) ([]json.RawMessage, error) {
	docs, err := m.ViewReader.ViewDocuments(ctx, orderID)
	for _, d := range docs {
		m.bytes += len(d)
	}
	return docs, err
}
