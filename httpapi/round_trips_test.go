package httpapi

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ordersink/orders-consumer/cosmos"
	"github.com/ordersink/orders-consumer/cosmos/cosmostest"
	"github.com/ordersink/orders-consumer/handler"
	"github.com/ordersink/orders-consumer/handler/handlertest"
	"github.com/ordersink/orders-consumer/idempotency"
	"github.com/ordersink/orders-consumer/orders"
)

// The HTTP API's sequential Cosmos DB requests, counted at the transport
// (issue 20): a first request claims the key, creates the order with its
// event in one batch and completes the key (3); a replay is the refused
// claim and the read of the record (2); GET is one point read (1). A
// request that finds the order there (a resend, a taken orderId) reads it
// too (4).
func TestHTTPAPIRoundTrips(t *testing.T) {
	env := testEnv(t)
	tr := cosmostest.NewTransport()
	store, err := env.StoreVia(tr)
	if err != nil {
		t.Fatal(err)
	}
	keys := store.KeyStore(cosmos.KeyContainer)
	warmUp(t, keys)
	d := &api{Server: startServer(t, config{Config: handler.Config{Processor: &orders.Processor{Store: store}, Orders: store},
		Functions: Functions{Idempotency: &idempotency.Service{Store: keys}}}), keys: env.DB.Keys(keys, cosmos.KeyContainer), store: cosmostest.Readable{Store: store, Database: env.DB}}
	id, body := handlertest.UniqueOrder(t)
	key := "round-trips-" + id

	for _, step := range []struct {
		name  string
		call  func() callerAnswer
		want  []string
		check func(callerAnswer)
	}{
		{"first request", func() callerAnswer { return d.submit(t, key, body) }, []string{"CREATE", "BATCH", "REPLACE"},
			func(a callerAnswer) { d.wantOrder(t, a, http.StatusCreated, id) }},
		{"replay", func() callerAnswer { return d.submit(t, key, body) }, []string{"CREATE", "READ"},
			func(a callerAnswer) {
				if a.StatusCode != http.StatusCreated || a.Header.Get(headerReplayed) != "true" {
					t.Errorf("replay %d %v", a.StatusCode, a.Header)
				}
			}},
		{"GET", func() callerAnswer { return d.get(t, getCall(id)) }, []string{"READ"},
			func(a callerAnswer) { d.wantOrder(t, a, http.StatusOK, id) }},
		// When the order exists, the batch's conflict carries no body: the
		// stored order costs a read before the key is completed.
		{"resend under a new key", func() callerAnswer { return d.submit(t, "new-"+key, body) }, []string{"CREATE", "BATCH", "READ", "REPLACE"},
			func(a callerAnswer) { d.wantOrder(t, a, http.StatusOK, id) }},
		{"known to another client", func() callerAnswer { return d.call(t, FunctionSubmitOrder, submitCall(key, body).by(partnerB)) },
			[]string{"CREATE", "BATCH", "READ", "REPLACE"},
			func(a callerAnswer) { wantReceipt(t, a, id) }},
		{"orderId taken", func() callerAnswer {
			return d.submit(t, "taken-"+key, bytes.Replace(body, []byte(`"CUST-42"`), []byte(`"CUST-43"`), 1))
		}, []string{"CREATE", "BATCH", "READ", "REPLACE"},
			func(a callerAnswer) { wantProblem(t, a, http.StatusConflict, "order-id-taken") }},
		// A body the rules refuse is refused once, for its key: the claim,
		// the read of its orderId (an order accepted before keeps its
		// answer), the stored refusal.
		{"invalid order", func() callerAnswer {
			return d.submit(t, "invalid-"+key, bytes.Replace(body, []byte(`"EUR"`), []byte(`"euro"`), 1))
		}, []string{"CREATE", "READ", "REPLACE"},
			func(a callerAnswer) { wantProblem(t, a, http.StatusUnprocessableEntity, "invalid-order") }},
		{"malformed order", func() callerAnswer { return d.submit(t, "malformed-"+key, []byte(`{"orderId":`)) },
			[]string{"CREATE", "REPLACE"},
			func(a callerAnswer) { wantProblem(t, a, http.StatusBadRequest, "malformed-order") }},
		{"a request refused before its key", func() callerAnswer { return d.submit(t, "", body) }, nil,
			func(a callerAnswer) { wantProblem(t, a, http.StatusBadRequest, "idempotency-key-missing") }},
	} {
		before := len(tr.Exchanges())
		a := step.call()
		var got []string
		for _, e := range tr.Exchanges()[before:] {
			got = append(got, e.Kind)
		}
		step.check(a) // reads the store too: after the count
		t.Logf("%s: %d requests %v", step.name, len(got), got)
		if strings.Join(got, " ") != strings.Join(step.want, " ") {
			t.Errorf("%s: Cosmos DB requests %v, want %v", step.name, got, step.want)
		}
	}
}

// warmUp makes the key container's first requests (the SDK's metadata
// reads) before the counting starts.
func warmUp(t *testing.T, keys *cosmos.KeyStore) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := keys.Claim(ctx, idempotency.Record{ID: "warm-up-" + strings.ReplaceAll(t.Name(), "/", "-") + time.Now().Format("150405.000000000"),
		Client: "anonymous", Operation: "warm-up", Key: "k", RequestHash: "h", State: idempotency.Started, TTL: 60}); err != nil {
		t.Fatal(err)
	}
}
