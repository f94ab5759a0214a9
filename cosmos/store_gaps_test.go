package cosmos_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ordersink/orders-consumer/cosmos"
	"github.com/ordersink/orders-consumer/cosmos/cosmostest"
	"github.com/ordersink/orders-consumer/orders"
	"github.com/ordersink/orders-consumer/orders/orderstest"
)

// A status document deleted between the read and the replace (an operator's
// cleanup, a TTL) answers the replace 404; the change is then created again
// rather than lost or abandoned to the broker.
func TestStatusDocumentDeletedBeforeTheReplaceIsCreatedAgain(t *testing.T) {
	e := testEnv(t)
	tr := cosmostest.NewTransport()
	store, err := e.StoreVia(tr)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	o := newOrder(t)
	at := time.Now()
	change := func(v int64, status string) orders.StatusChange {
		return orders.StatusChange{OrderID: o.ID, Status: status, Version: v, ChangedAt: at}
	}
	if _, err := store.ApplyStatus(ctx, change(1, "Placed"), "m1", at); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	var deleteErr error
	tr.Before(func(kind string, r *http.Request) *http.Response {
		if kind == "REPLACE" {
			once.Do(func() { deleteErr = e.Store.DeleteDocument(ctx, o.ID, orders.StatusDocumentID(o.ID)) })
		}
		return nil
	})
	r, err := store.ApplyStatus(ctx, change(2, "Paid"), "m2", at)
	if deleteErr != nil {
		t.Fatalf("delete: %v", deleteErr)
	}
	if err != nil || !r.Applied || r.Attempts != 2 {
		t.Fatalf("applied %+v, err %v: want applied on the second attempt", r, err)
	}
	var kinds []string
	for _, x := range tr.Exchanges("CREATE", "READ", "REPLACE") {
		kinds = append(kinds, x.Kind+" "+http.StatusText(x.Status))
	}
	want := []string{"CREATE Created", "CREATE Conflict", "READ OK", "REPLACE Not Found", "CREATE Created"}
	if strings.Join(kinds, ", ") != strings.Join(want, ", ") {
		t.Errorf("exchanges %v, want %v", kinds, want)
	}
	docs := typesIn(t, e, o.ID)
	if len(docs) != 1 || docs[0] != orders.TypeOrderStatus {
		t.Fatalf("partition holds %v, want the status document", docs)
	}
	stored, err := e.Store.PartitionDocuments(ctx, o.ID)
	if err != nil || len(stored) != 1 || !containsAll(string(stored[0]), `"status":"Paid"`, `"version":2`) {
		t.Errorf("stored status %s (err %v), want Paid v2", stored, err)
	}
}

func containsAll(s string, parts ...string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}

// Bounding requests by the operation (cosmos/recovery.go) must not make every
// failure final: a read whose connection dropped while the operation still
// has time is retried by the SDK as before.
func TestDroppedReadIsStillRetriedWithinTheOperation(t *testing.T) {
	o := newOrder(t)
	var mu sync.Mutex
	reads := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.Method == http.MethodGet && r.URL.Path == "/":
			loc := []map[string]string{{"name": "local", "databaseAccountEndpoint": "http://" + r.Host + "/"}}
			_ = json.NewEncoder(w).Encode(map[string]any{"writableLocations": loc, "readableLocations": loc,
				"userConsistencyPolicy": map[string]string{"defaultConsistencyLevel": "Session"}})
		case r.Method == http.MethodPost: // the batch: the order exists
			w.WriteHeader(http.StatusMultiStatus)
			_, _ = w.Write([]byte(`[{"statusCode":409},{"statusCode":424}]`))
		default: // the point read of the stored fingerprint
			mu.Lock()
			reads++
			first := reads == 1
			mu.Unlock()
			if first {
				if conn, _, err := w.(http.Hijacker).Hijack(); err == nil {
					conn.Close() // the request is lost with its connection
				}
				return
			}
			_ = json.NewEncoder(w).Encode(map[string]any{"id": o.ID, "orderId": o.ID, "requestHash": o.Hash, "hashVersion": 1})
		}
	}))
	defer srv.Close()
	store, err := cosmos.Open(cosmos.Options{Endpoint: srv.URL + "/", Key: "a2V5"}, "shop", "orders")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	fp, err := store.CreateOrder(ctx, orderstest.Batch(t, o, orders.Acceptance{MessageID: "m", AcceptedAt: time.Now()}))
	if err != nil || fp == nil || fp.Hash != o.Hash {
		t.Fatalf("fingerprint %+v, err %v: want the stored one, read on the retry", fp, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if reads != 2 {
		t.Errorf("%d reads, want the dropped one and its retry", reads)
	}
}
