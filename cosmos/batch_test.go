package cosmos

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ordersink/orders-consumer/orders"
	"github.com/ordersink/orders-consumer/orders/orderstest"
)

func docOf(id, orderID string, size int) orders.NewDocument {
	pad := strings.Repeat("x", max(0, size))
	return orders.NewDocument{ID: id, Body: fmt.Appendf(nil, `{"id":%q,"orderId":%q,"pad":%q}`, id, orderID, pad)}
}

func TestCheckBatchLimits(t *testing.T) {
	many := make([]orders.NewDocument, MaxBatchOperations+1)
	for i := range many {
		many[i] = docOf(fmt.Sprintf("A:%d", i), "A", 0)
	}
	tests := []struct {
		name    string
		docs    []orders.NewDocument
		mention string // "" when the batch is acceptable
	}{
		{"order and event", []orders.NewDocument{docOf("A", "A", 1000), docOf("A:event:OrderAccepted", "A", 500)}, ""},
		{"100 operations", many[:MaxBatchOperations], ""},
		{"101 operations", many, "at most 100 operations"},
		{"no operations", nil, "no operations"},
		{"just under 2 MB", []orders.NewDocument{docOf("A", "A", MaxBatchBytes-400)}, ""},
		{"over 2 MB in one document", []orders.NewDocument{docOf("A", "A", MaxBatchBytes)}, "2 MB"},
		{"over 2 MB together", []orders.NewDocument{docOf("A", "A", MaxBatchBytes/2), docOf("A:event:OrderAccepted", "A", MaxBatchBytes/2)}, "2 MB"},
		{"another partition", []orders.NewDocument{docOf("A", "A", 10), docOf("B:event:OrderAccepted", "B", 10)}, "outside the batch's partition"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := checkBatch("A", tc.docs)
			switch {
			case tc.mention == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.mention != "" && (err == nil || !strings.Contains(err.Error(), tc.mention)):
				t.Errorf("error %v, want one mentioning %q", err, tc.mention)
			}
		})
	}
}

// fakeCosmos answers like the real service where the emulators do not: a
// failed transactional batch is HTTP 207 with the failing operation's status
// and 424 for the others.
type fakeCosmos struct {
	*httptest.Server
	mu       sync.Mutex
	batch    func() (int, string) // HTTP status and body of the next batch
	requests []string
}

func newFakeCosmos(t *testing.T) *fakeCosmos {
	f := &fakeCosmos{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.requests = append(f.requests, r.Method+" "+r.URL.Path)
		batch := f.batch
		f.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.Method == http.MethodGet && r.URL.Path == "/":
			loc := []map[string]string{{"name": "local", "databaseAccountEndpoint": f.URL + "/"}}
			_ = json.NewEncoder(w).Encode(map[string]any{"writableLocations": loc, "readableLocations": loc,
				"userConsistencyPolicy": map[string]string{"defaultConsistencyLevel": "Session"}})
		case r.Method == http.MethodPost && r.Header.Get("x-ms-cosmos-is-batch-request") != "":
			status, body := batch()
			w.WriteHeader(status)
			_, _ = w.Write([]byte(body))
		case r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/docs/"):
			_, _ = w.Write([]byte(`{"id":"A","orderId":"A","requestHash":"sha256:stored","hashVersion":1}`))
		default:
			w.WriteHeader(http.StatusNotImplemented)
		}
	}))
	t.Cleanup(f.Close)
	return f
}

func TestBatchCreateReadsEveryOperation(t *testing.T) {
	f := newFakeCosmos(t)
	store, err := Open(Options{Endpoint: f.URL + "/", Key: "a2V5"}, "shop", "orders")
	if err != nil {
		t.Fatal(err)
	}
	docs := []orders.NewDocument{docOf("A", "A", 10), docOf("A:event:OrderAccepted", "A", 10)}
	ops := func(codes ...int) string {
		parts := make([]string, len(codes))
		for i, c := range codes {
			parts[i] = fmt.Sprintf(`{"statusCode":%d,"requestCharge":1.2}`, c)
		}
		return "[" + strings.Join(parts, ",") + "]"
	}
	tests := []struct {
		name      string
		status    int
		body      string
		exists    bool
		failed    bool
		transient bool
		mention   string
	}{
		{"both created", 200, ops(201, 201), false, false, false, ""},
		{"marker exists (real Cosmos)", 207, ops(409, 424), true, false, false, ""},
		{"marker exists (emulator: 200 and Success=true)", 200, ops(409, 424), true, false, false, ""},
		{"event exists without its order", 207, ops(424, 409), false, true, false, "operation 1"},
		{"throttled on the event", 207, ops(424, 429), false, true, true, "429"},
		{"event refused as too large", 207, ops(424, 413), false, true, false, "413"},
		{"the emulator's 200 with a failed operation", 200, ops(201, 409), false, true, false, "operation 1"},
		{"only dependency failures", 207, ops(424, 424), false, true, true, "without a cause"},
		{"207 with no failed operation", 207, ops(201, 201), false, true, true, "without a cause"},
		{"fewer results than operations", 200, ops(201), false, true, true, "answered 1 results"},
		// 200 is no promise: operations that all depend on an unnamed failure
		// are not a success.
		{"200 with only dependency failures", 200, ops(424, 424), false, true, true, "without a cause"},
		{"order refused as bad", 207, ops(400, 424), false, true, false, "400"},
		{"event refused as bad", 207, ops(424, 400), false, true, false, "operation 1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f.mu.Lock()
			f.batch = func() (int, string) { return tc.status, tc.body }
			f.mu.Unlock()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			exists, err := store.batchCreate(ctx, "create order", "A", docs)
			if exists != tc.exists || (err != nil) != tc.failed {
				t.Fatalf("exists %v, err %v; want exists %v, failed %v", exists, err, tc.exists, tc.failed)
			}
			if err == nil {
				return
			}
			var se *orders.StoreError
			if !errors.As(err, &se) || se.Transient() != tc.transient || !strings.Contains(err.Error(), tc.mention) || se.OrderID != "A" {
				t.Errorf("error %v (%+v), want transient %v mentioning %q", err, se, tc.transient, tc.mention)
			}
		})
	}
}

func TestCreateOrderReadsTheStoredFingerprintOnConflict(t *testing.T) {
	f := newFakeCosmos(t)
	f.batch = func() (int, string) { return 207, `[{"statusCode":409},{"statusCode":424}]` }
	store, err := Open(Options{Endpoint: f.URL + "/", Key: "a2V5"}, "shop", "orders")
	if err != nil {
		t.Fatal(err)
	}
	o, err := orders.ParseOrder([]byte(`{"orderId":"A","customerId":"C","currency":"EUR","lines":[{"sku":"S","quantity":1,"unitPrice":"1.00"}],"total":"1.00","placedAt":"2026-11-29T10:00:00Z"}`))
	if err != nil {
		t.Fatal(err)
	}
	fp, err := store.CreateOrder(context.Background(), orderstest.Batch(t, o, orders.Acceptance{MessageID: "A", AcceptedAt: time.Now()}))
	if err != nil || fp == nil || fp.Hash != "sha256:stored" || fp.Version != 1 {
		t.Fatalf("fingerprint %+v, err %v", fp, err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	var kinds []string
	for _, r := range f.requests {
		if r != "GET /" {
			kinds = append(kinds, strings.Fields(r)[0])
		}
	}
	if strings.Join(kinds, " ") != "POST GET" {
		t.Errorf("requests %v, want the batch and one point read", f.requests)
	}
}
