package cosmos_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ordersink/orders-consumer/cosmos"
	"github.com/ordersink/orders-consumer/cosmos/cosmostest"
	"github.com/ordersink/orders-consumer/orders"
	"github.com/ordersink/orders-consumer/orders/orderstest"
)

// The bounded loops of the store, with a transport in front of the emulator
// answering what only a real account sends (a lagging replica's 404, lost
// races). handler/process_order*store_races_test.go drive the same windows through the
// handler; these pin the bounds.

func transportStore(t *testing.T) (*cosmos.Store, *cosmostest.Transport) {
	t.Helper()
	tr := cosmostest.NewTransport()
	store, err := testEnv(t).StoreVia(tr)
	if err != nil {
		t.Fatal(err)
	}
	return store, tr
}

// answerFirst answers the first n requests of kind with status and body,
// and lets the rest through.
func answerFirst(tr *cosmostest.Transport, kind string, n, status int, body string) {
	var mu sync.Mutex
	tr.Before(func(k string, r *http.Request) *http.Response {
		mu.Lock()
		defer mu.Unlock()
		if k != kind || n == 0 {
			return nil
		}
		n--
		return cosmostest.Answer(r, status, body)
	})
}

func TestFingerprintReadAfterAConflictIsRetriedBriefly(t *testing.T) {
	store, tr := transportStore(t)
	ctx := context.Background()
	o := newOrder(t)
	a := orders.Acceptance{MessageID: o.ID, AcceptedAt: time.Now()}
	if fp, err := store.CreateOrder(ctx, orderstest.Batch(t, o, a)); fp != nil || err != nil {
		t.Fatalf("create: %+v, %v", fp, err)
	}
	const notFound = `{"code":"NotFound","message":"Entity with the specified id does not exist in the system."}`
	tests := []struct {
		misses int
		found  bool
		reads  int
	}{
		{1, true, 2},
		{3, true, 4},
		{100, false, 4}, // 20 + 80 + 320 ms of waits, then the broker's turn
	}
	for _, tc := range tests {
		before := len(tr.Exchanges("READ"))
		answerFirst(tr, "READ", tc.misses, http.StatusNotFound, notFound)
		fp, err := store.CreateOrder(ctx, orderstest.Batch(t, o, a))
		var se *orders.StoreError
		switch {
		case tc.found && (err != nil || fp == nil || fp.Hash != o.Hash):
			t.Errorf("%d misses: fingerprint %+v, err %v; want the stored one", tc.misses, fp, err)
		case !tc.found && (!errors.As(err, &se) || !se.Transient() || se.Status != http.StatusNotFound):
			t.Errorf("%d misses: err %v; want a transient 404", tc.misses, err)
		}
		if n := len(tr.Exchanges("READ")) - before; n != tc.reads {
			t.Errorf("%d misses: %d reads, want %d", tc.misses, n, tc.reads)
		}
	}
}

// Each lost race (412) means another writer committed; MaxStatusAttempts
// races are survived, one more gives the message back to the broker.
func TestStatusWriteSurvivesLostRacesUpToTheBound(t *testing.T) {
	store, tr := transportStore(t)
	ctx := context.Background()
	o := newOrder(t)
	at := time.Now()
	change := func(v int64) orders.StatusChange {
		return orders.StatusChange{OrderID: o.ID, Status: "S", Version: v, ChangedAt: at}
	}
	if _, err := store.ApplyStatus(ctx, change(1), "m1", at); err != nil {
		t.Fatal(err)
	}
	const lost = `{"code":"PreconditionFailed","message":"Operation cannot be performed because one of the specified precondition is not met."}`

	answerFirst(tr, "REPLACE", cosmos.MaxStatusAttempts-1, http.StatusPreconditionFailed, lost)
	r, err := store.ApplyStatus(ctx, change(2), "m2", at)
	if err != nil || !r.Applied || r.Attempts != cosmos.MaxStatusAttempts {
		t.Fatalf("applied %+v, err %v: want applied on attempt %d", r, err, cosmos.MaxStatusAttempts)
	}
	for _, x := range tr.Exchanges("REPLACE") {
		if x.IfMatch == "" {
			t.Fatalf("a replace without If-Match: %+v", x)
		}
	}

	answerFirst(tr, "REPLACE", cosmos.MaxStatusAttempts, http.StatusPreconditionFailed, lost)
	_, err = store.ApplyStatus(ctx, change(3), "m3", at)
	var se *orders.StoreError
	if !errors.As(err, &se) || !se.Transient() || !strings.Contains(err.Error(), fmt.Sprintf("lost %d races", cosmos.MaxStatusAttempts)) {
		t.Errorf("err %v: want a transient error after %d lost races", err, cosmos.MaxStatusAttempts)
	}
}

// CreateContainers is run against emulators that may already have the
// database (scripts/emulator.sh, then every test binary); the orders
// container keeps TTL on with no default expiry, so only conflict records
// (which carry a ttl) ever expire.
func TestCreateContainersIsRepeatableAndKeepsOrdersForever(t *testing.T) {
	e := testEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := e.Store.CreateContainers(ctx); err != nil {
		t.Fatalf("second CreateContainers: %v", err)
	}
	ttl, err := e.Store.DefaultTTL(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if ttl == nil || *ttl != -1 {
		t.Errorf("default TTL %v, want -1 (on, no expiry)", ttl)
	}
}
