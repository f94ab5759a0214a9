package cosmos_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ordersink/orders-consumer/cosmos"
	"github.com/ordersink/orders-consumer/internal/pipetest"
	"github.com/ordersink/orders-consumer/orders"
	"github.com/ordersink/orders-consumer/orders/orderstest"
)

// A handler restarted as a 403 window begins (the make chaos stall,
// docs/evidence/chaos.md): its first request is on its way when the window opens,
// the next one is refused, which makes the Store replace its client, and
// only then does the first one get its answer. The replacement has not read
// the account yet; its first read meets the 403, which azcosmos v1.5.0
// keeps for five minutes, sending nothing meanwhile. An answer on the old
// client says nothing about the new one: once Cosmos DB is back, the Store
// must serve within the consumer's 5 s, not after the SDK's five minutes.
// On virtual time, the fake Cosmos DB on a network in memory: the 5 s, the
// rebuild interval and the SDK's own clocks are the bubble's.
func TestAnswerOnAReplacedClientLeavesNoCachedRefusal(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var forbidden atomic.Bool
		var accountReads atomic.Int64
		held := make(chan struct{}) // the first batch has reached Cosmos DB
		release := make(chan struct{})
		var first atomic.Bool
		n := &pipetest.Network{}
		t.Cleanup(n.Drain)
		endpoint := n.Serve(t, "127.0.0.1:8081", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			isAccount := r.Method == http.MethodGet && r.URL.Path == "/"
			if isAccount {
				accountReads.Add(1)
			}
			if !first.Load() && r.Method == http.MethodPost {
				// The first batch was sent before the window: it is answered
				// once the window is on and the client was replaced.
				first.Store(true)
				close(held)
				<-release
				_, _ = w.Write([]byte(`[{"statusCode":201},{"statusCode":201}]`))
				return
			}
			if forbidden.Load() {
				w.Header().Set("x-ms-substatus", "5301")
				w.WriteHeader(http.StatusForbidden)
				_, _ = w.Write([]byte(`{"code":"Forbidden","message":"Request blocked by Auth (test)"}`))
				return
			}
			switch {
			case isAccount:
				loc := []map[string]string{{"name": "local", "databaseAccountEndpoint": "http://" + r.Host + "/"}}
				_ = json.NewEncoder(w).Encode(map[string]any{"writableLocations": loc, "readableLocations": loc,
					"userConsistencyPolicy": map[string]string{"defaultConsistencyLevel": "Session"}})
			case r.Method == http.MethodPost:
				_, _ = w.Write([]byte(`[{"statusCode":201},{"statusCode":201}]`))
			default:
				http.NotFound(w, r)
			}
		}))
		store, err := cosmos.Open(cosmos.Options{Endpoint: endpoint + "/", Key: "a2V5", Transport: n.Transport()}, "shop", "orders")
		if err != nil {
			t.Fatal(err)
		}
		create := func(timeout time.Duration) error {
			ctx, cancel := context.WithTimeout(context.Background(), timeout)
			defer cancel()
			_, err := store.CreateOrder(ctx, orderstest.Batch(t, newOrder(t), orders.Acceptance{MessageID: "m", AcceptedAt: time.Now()}))
			return err
		}

		answered := make(chan error, 1)
		go func() { answered <- create(20 * time.Second) }()
		t.Cleanup(func() {
			select {
			case <-release:
			default:
				close(release)
			}
		})
		select {
		case <-held:
		case <-time.After(10 * time.Second):
			t.Fatal("the first batch never reached Cosmos DB")
		}
		forbidden.Store(true)
		if err := create(2 * time.Second); err == nil || !strings.Contains(err.Error(), "403") {
			t.Fatalf("a request in the 403 window: %v, want the 403", err)
		}
		close(release)
		if err := <-answered; err != nil {
			t.Fatalf("the batch sent before the window: %v, want it created", err)
		}
		// The next requests go out in the window, on whichever client the
		// Store now uses.
		time.Sleep(600 * time.Millisecond) // past the Store's rebuild interval
		for range 2 {
			if err := create(2 * time.Second); err == nil {
				t.Fatal("a request in the 403 window succeeded")
			}
		}
		forbidden.Store(false)
		back := time.Now()
		var last error
		for time.Since(back) < 5*time.Second {
			if last = create(time.Second); last == nil {
				t.Logf("served %s after Cosmos DB answered again (%d account reads)", time.Since(back).Round(time.Millisecond), accountReads.Load())
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Fatalf("not served within 5 s of Cosmos DB answering again: %v (%d account reads in all)", last, accountReads.Load())
	})
}
