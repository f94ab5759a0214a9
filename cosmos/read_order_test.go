package cosmos_test

import (
	"context"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ordersink/orders-consumer/cosmos/cosmostest"
	"github.com/ordersink/orders-consumer/orders"
	"github.com/ordersink/orders-consumer/orders/orderstest"
)

// ReadOrder is GetOrder's point read: the stored document, nothing for a
// 404 (what Cosmos DB answers for a missing item) read 4 times (a replica a
// write behind catches up meanwhile), a StoreError that says whether a
// retry may help for anything else. The local emulator's 500 for a missing
// item is asked again with a query, once, on a loopback endpoint only.
func TestReadOrder(t *testing.T) {
	e, o, ctx := storedOrder(t)
	// Cosmos DB answers a missing item 404 itself; the local emulator
	// answers 500 (which the SDK retries), then the query finds nothing.
	missing := "READ( READ){3}"
	if e.LocalEmulator {
		missing = "READ( READ)* QUERY"
	}
	for _, tc := range []struct {
		name      string
		id        string
		fake      *int // the status answered for the point read, when faked
		found     bool
		transient bool
		wantErr   bool
		requests  string // a regular expression of the request kinds
	}{
		{"stored", o.ID, nil, true, false, false, "READ"},
		{"404: none", o.ID, ptr(http.StatusNotFound), false, false, false, "READ( READ){3}"},
		{"forbidden: a role assignment still propagating", o.ID, ptr(http.StatusForbidden), false, true, true, ""},
		{"refused", o.ID, ptr(http.StatusBadRequest), false, false, true, ""},
		{"missing", "ORD-never-stored-" + o.ID, nil, false, false, false, missing},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := cosmostest.NewTransport()
			store, err := e.StoreVia(tr)
			if err != nil {
				t.Fatal(err)
			}
			if tc.fake != nil {
				tr.Before(func(kind string, r *http.Request) *http.Response {
					if kind == "READ" {
						return cosmostest.Answer(r, *tc.fake, `{"code":"faked","message":"faked"}`)
					}
					return nil
				})
			}
			before := len(tr.Exchanges())
			doc, err := store.ReadOrder(ctx, tc.id)
			if tc.wantErr {
				if err == nil || orders.IsTransient(err) != tc.transient {
					t.Fatalf("err %v, want a StoreError with transient %v", err, tc.transient)
				}
				return
			}
			if err != nil || (doc != nil) != tc.found {
				t.Fatalf("ReadOrder: %.200s, %v; want found %v", doc, err, tc.found)
			}
			if tc.found {
				fp, err := orders.ParseStoredFingerprint(doc)
				if err != nil || fp.Hash != o.Hash {
					t.Errorf("stored document %.200s: %+v %v", doc, fp, err)
				}
			}
			var got []string
			for _, x := range tr.Exchanges()[before:] {
				got = append(got, x.Kind)
			}
			if !regexp.MustCompile("^" + tc.requests + "$").MatchString(strings.Join(got, " ")) {
				t.Errorf("requests %v, want %s", got, tc.requests)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

// storedOrder stores a new order and returns it, with the test's
// environment and a context that ends with the test.
func storedOrder(t *testing.T) (*cosmostest.Env, *orders.Order, context.Context) {
	t.Helper()
	e := testEnv(t)
	o := newOrder(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	if _, err := e.Store.CreateOrder(ctx, orderstest.Batch(t, o, orders.Acceptance{MessageID: "m", AcceptedAt: time.Now()})); err != nil {
		t.Fatal(err)
	}
	return e, o, ctx
}

// A read served by a replica a write behind answers 404 for an order just
// created through another instance: ReadOrder reads again and finds it
// (docs/adr/0016-reads-behind-a-write.md).
func TestReadOrderReadsAgainBehindAWrite(t *testing.T) {
	e, o, ctx := storedOrder(t)
	tr := cosmostest.NewTransport()
	store, err := e.StoreVia(tr)
	if err != nil {
		t.Fatal(err)
	}
	behind := 3 // the replica catches up after three reads
	tr.Before(func(kind string, r *http.Request) *http.Response {
		if kind == "READ" && behind > 0 {
			behind--
			return cosmostest.Answer(r, http.StatusNotFound, `{"code":"NotFound","message":"a replica a write behind"}`)
		}
		return nil
	})
	if doc, err := store.ReadOrder(ctx, o.ID); err != nil || doc == nil {
		t.Fatalf("ReadOrder: %.200s, %v; want the order", doc, err)
	}
}
