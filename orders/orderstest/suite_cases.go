package orderstest

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ordersink/orders-consumer/orders"
)

// created accepts a new order and checks that it was created.
func created(t *testing.T, s Backend) *orders.Order {
	t.Helper()
	o := newOrder(t, "")
	if fp, err := s.CreateOrder(context.Background(), accept(t, o)); fp != nil || err != nil {
		t.Fatalf("create: %+v, %v; want nil, nil", fp, err)
	}
	return o
}

func testCreate(t *testing.T, s Backend, _ Features) {
	o := created(t, s)
	wantDocuments(t, s, o.ID, accepted(o))
}

// The store writes the batch it is given, not documents of its own making:
// the event the processor checked against the topic's budget is the event
// the publisher reads (docs/contract.md §3, event size).
func testCreateAsGiven(t *testing.T, s Backend, _ Features) {
	o := newOrder(t, `,"giftWrap":{"paper":"red"}`)
	b := accept(t, o)
	if fp, err := s.CreateOrder(context.Background(), b); fp != nil || err != nil {
		t.Fatalf("create: %+v, %v; want nil, nil", fp, err)
	}
	stored, err := s.PartitionDocuments(context.Background(), o.ID)
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]map[string]any{}
	for _, d := range stored {
		var v map[string]any
		if err := json.Unmarshal(d, &v); err != nil {
			t.Fatalf("stored document is not JSON: %s", d)
		}
		for k := range v {
			if strings.HasPrefix(k, "_") { // the store's own: _rid, _etag, _ts, …
				delete(v, k)
			}
		}
		id, _ := v["id"].(string)
		byID[id] = v
	}
	for _, d := range b.Documents {
		var want map[string]any
		if err := json.Unmarshal(d.Body, &want); err != nil {
			t.Fatal(err)
		}
		if got, _ := json.Marshal(byID[d.ID]); string(got) != string(mustMarshal(t, want)) {
			t.Errorf("document %s stored as\n%s\nwant\n%s", d.ID, got, mustMarshal(t, want))
		}
	}
}

func mustMarshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func testRedelivery(t *testing.T, s Backend, _ Features) {
	o := created(t, s)
	ctx := context.Background()
	fp, err := s.CreateOrder(ctx, accept(t, o))
	if err != nil || fp == nil || fp.Hash != o.Hash || fp.Version != orders.HashVersion {
		t.Fatalf("second create: %+v, %v; want the stored fingerprint %s v%d", fp, err, o.Hash, orders.HashVersion)
	}
	wantDocuments(t, s, o.ID, accepted(o))
}

func testOtherContent(t *testing.T, s Backend, _ Features) {
	o := created(t, s)
	ctx := context.Background()
	other := orderWithID(t, o.ID, `,"giftWrap":true`)
	fp, err := s.CreateOrder(ctx, accept(t, other))
	if err != nil || fp == nil || fp.Hash != o.Hash {
		t.Fatalf("create of other content: %+v, %v; want the first content's fingerprint %s", fp, err, o.Hash)
	}
	wantDocuments(t, s, o.ID, accepted(o))
}

func testConcurrentCreates(t *testing.T, s Backend, _ Features) {
	o := newOrder(t, "")
	const n = 6
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		created int
		errs    []error
	)
	for range n {
		wg.Go(func() {
			fp, err := s.CreateOrder(context.Background(), accept(t, o))
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err != nil:
				errs = append(errs, err)
			case fp == nil:
				created++
			case fp.Hash != o.Hash:
				t.Errorf("stored fingerprint %s, want %s", fp.Hash, o.Hash)
			}
		})
	}
	wg.Wait()
	if created != 1 || len(errs) > 0 {
		t.Errorf("%d of %d concurrent creates claimed the order, errors %v; want exactly 1 and none", created, n, errs)
	}
	wantDocuments(t, s, o.ID, accepted(o))
}

// seed writes document i of o's acceptance batch alone (0 the order, 1 its
// outbox event; accept checks that both are there): states left by older
// versions or by a bug.
func seed(t *testing.T, s Backend, o *orders.Order, i int) {
	t.Helper()
	if err := s.CreateDocument(context.Background(), o.ID, accept(t, o).Documents[i].Body); err != nil {
		t.Fatal(err)
	}
}

// An order accepted before the outbox existed has no event; its redelivery
// is a duplicate and must not add a late event.
func testMarkerWithoutEvent(t *testing.T, s Backend, _ Features) {
	o := newOrder(t, "")
	seed(t, s, o, 0)
	fp, err := s.CreateOrder(context.Background(), accept(t, o))
	if err != nil || fp == nil || fp.Hash != o.Hash {
		t.Fatalf("create over a stored order: %+v, %v; want its fingerprint", fp, err)
	}
	wantDocuments(t, s, o.ID, map[string]string{o.ID: orders.TypeOrder})
}

// messageId and acceptedAt only explain a duplicate: a stored order that
// spells them otherwise still yields its fingerprint (orders.ParseStoredFingerprint).
func testForeignAcceptance(t *testing.T, s Backend, _ Features) {
	o := newOrder(t, "")
	doc := fmt.Sprintf(`{"id":%q,"orderId":%q,"type":%q,"requestHash":%q,"hashVersion":%d,"messageId":5,"acceptedAt":"yesterday"}`,
		o.ID, o.ID, orders.TypeOrder, o.Hash, orders.HashVersion)
	if err := s.CreateDocument(context.Background(), o.ID, []byte(doc)); err != nil {
		t.Fatal(err)
	}
	fp, err := s.CreateOrder(context.Background(), accept(t, o))
	if err != nil || fp == nil || fp.Hash != o.Hash || fp.MessageID != "" || !fp.AcceptedAt.IsZero() {
		t.Fatalf("create over a stored order with foreign messageId/acceptedAt: %+v, %v; want its fingerprint alone", fp, err)
	}
}

// An event without its order cannot come from this consumer, and no
// redelivery can create the order beside it: the failure is final.
func testEventWithoutOrder(t *testing.T, s Backend, f Features) {
	o := newOrder(t, "")
	seed(t, s, o, 1)
	fp, err := s.CreateOrder(context.Background(), accept(t, o))
	if fp != nil {
		t.Fatalf("fingerprint %+v for an order that was never stored", fp)
	}
	wantStoreError(t, err, o.ID, false)
	if !f.AtomicBatches {
		t.Skip("batches are not atomic here (the local emulator keeps operation 0); run against a real account or Microsoft's emulator (COSMOS_ENDPOINT) to check the rollback")
	}
	wantDocuments(t, s, o.ID, map[string]string{orders.EventID(o.ID, orders.EventOrderAccepted): orders.TypeOutboxEvent})
}

// A batch over Cosmos DB's 2 MB is refused on every attempt, so the order is
// final (parked), not retried ten times.
func testTooLarge(t *testing.T, s Backend, _ Features) {
	// Strings within the string length limit of docs/contract.md §3, past
	// the 2 MB together.
	note := `"` + strings.Repeat("x", orders.MaxTokenBytes) + `"`
	o := newOrder(t, `,"notes":[`+strings.TrimSuffix(strings.Repeat(note+",", MaxBatchBytes/orders.MaxTokenBytes+1), ",")+`]`)
	fp, err := s.CreateOrder(context.Background(), accept(t, o))
	if fp != nil {
		t.Fatalf("fingerprint %+v for an order that was never stored", fp)
	}
	wantStoreError(t, err, o.ID, false)
	wantDocuments(t, s, o.ID, map[string]string{})
}

// A call whose context has ended (the invocation's deadline) may or may not
// have written: it is transient, so the broker redelivers.
func testEndedContext(t *testing.T, s Backend, _ Features) {
	o := newOrder(t, "")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := s.CreateOrder(ctx, accept(t, o))
	wantStoreError(t, err, o.ID, true)
	err = s.RecordConflict(ctx, orders.Conflict{OrderID: o.ID, StoredHash: o.Hash, IncomingHash: o.Hash})
	wantStoreError(t, err, o.ID, true)
	_, err = s.ApplyStatus(ctx, orders.StatusChange{OrderID: o.ID, Status: "Paid", Version: 1, ChangedAt: time.Now()}, o.ID, time.Now())
	wantStoreError(t, err, o.ID, true)
	wantDocuments(t, s, o.ID, map[string]string{})
}

func testConflict(t *testing.T, s Backend, _ Features) {
	o := created(t, s)
	ctx := context.Background()
	other := orderWithID(t, o.ID, `,"giftWrap":true`)
	c := orders.Conflict{OrderID: o.ID, MessageID: o.ID, StoredHash: o.Hash, IncomingHash: other.Hash, Body: "{}", DetectedAt: time.Now()}
	for i := range 2 {
		if err := s.RecordConflict(ctx, c); err != nil {
			t.Fatalf("record conflict, call %d: %v", i+1, err)
		}
	}
	want := accepted(o)
	want[c.ID()] = orders.TypeConflict
	wantDocuments(t, s, o.ID, want)
}

func status(orderID, name string, version int64) orders.StatusChange {
	return orders.StatusChange{OrderID: orderID, Status: name, Version: version, ChangedAt: time.Date(2026, 11, 29, 12, 30, 0, 0, time.UTC)}
}

func testStatusVersions(t *testing.T, s Backend, _ Features) {
	id := newOrder(t, "").ID
	steps := []struct {
		status  string
		version int64
		applied bool
		prev    *orders.StoredStatus
	}{
		{"Paid", 2, true, nil},
		{"Paid", 2, false, &orders.StoredStatus{Status: "Paid", Version: 2}},
		{"Placed", 1, false, &orders.StoredStatus{Status: "Paid", Version: 2}},
		{"Cancelled", 2, false, &orders.StoredStatus{Status: "Paid", Version: 2}},
		{"Shipped", 4, true, &orders.StoredStatus{Status: "Paid", Version: 2}},
	}
	for i, st := range steps {
		got, err := s.ApplyStatus(context.Background(), status(id, st.status, st.version), id+":status", time.Now())
		if err != nil || got.Applied != st.applied || got.Attempts < 1 ||
			(got.Previous == nil) != (st.prev == nil) || (st.prev != nil && *got.Previous != *st.prev) {
			t.Errorf("step %d, %s v%d: %+v (previous %+v), %v; want applied %v, previous %+v",
				i, st.status, st.version, got, got.Previous, err, st.applied, st.prev)
		}
	}
	wantDocuments(t, s, id, map[string]string{orders.StatusDocumentID(id): orders.TypeOrderStatus})
	wantStoredVersion(t, s, id, "Shipped", 4)
}

func testConcurrentStatuses(t *testing.T, s Backend, _ Features) {
	id := newOrder(t, "").ID
	const n = 6
	results := make([]orders.StatusApplied, n+1)
	errs := make([]error, n+1)
	var wg sync.WaitGroup
	for v := int64(n); v >= 1; v-- {
		wg.Go(func() {
			results[v], errs[v] = s.ApplyStatus(context.Background(), status(id, "S"+strconv.FormatInt(v, 10), v), id+":status", time.Now())
		})
	}
	wg.Wait()
	for v := 1; v <= n; v++ {
		if errs[v] != nil {
			// n writers of one order all finish within n conditional writes.
			t.Errorf("v%d of %d concurrent writers: %v", v, n, errs[v])
		}
	}
	if errs[n] != nil || !results[n].Applied {
		t.Errorf("the highest version: %+v, %v; want applied", results[n], errs[n])
	}
	wantStoredVersion(t, s, id, "S"+strconv.Itoa(n), n)
}

func wantStoredVersion(t *testing.T, s Backend, orderID, name string, version int64) {
	t.Helper()
	docs, err := s.PartitionDocuments(context.Background(), orderID)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range docs {
		var v struct {
			ID, Status string
			Version    int64
		}
		if json.Unmarshal(d, &v) == nil && v.ID == orders.StatusDocumentID(orderID) {
			if v.Status != name || v.Version != version {
				t.Errorf("stored status %s v%d, want %s v%d", v.Status, v.Version, name, version)
			}
			return
		}
	}
	t.Errorf("no status document for %s", orderID)
}
