package cosmos_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ordersink/orders-consumer/cosmos"
	"github.com/ordersink/orders-consumer/cosmos/cosmostest"
	"github.com/ordersink/orders-consumer/idempotency"
	"github.com/ordersink/orders-consumer/idempotency/idemtest"
	"github.com/ordersink/orders-consumer/internal/requestcharge"
)

// TestKeyStoreSuite runs the store suite idemtest.MemStore passes: claim is
// create, conditional replace and delete by ETag, the stored document.
func TestKeyStoreSuite(t *testing.T) {
	e := testEnv(t)
	idemtest.TestStore(t, idemtest.Features{ReadOfMissingIsNotFound: !e.LocalEmulator}, func(*testing.T) idemtest.Backend { return e.Keys })
}

// TestKeyStoreService runs the executeOnce scenarios over Cosmos DB: 32
// concurrent requests with one key, dead workers, fencing.
func TestKeyStoreService(t *testing.T) {
	e := testEnv(t)
	idemtest.TestService(t, func(*testing.T) idemtest.Backend { return e.Keys })
}

// TestKeyStoreRoundTrips checks that each store call of Execute is one
// request to Cosmos DB, so idemtest.RoundTrips are Cosmos round trips.
func TestKeyStoreRoundTrips(t *testing.T) {
	tr := cosmostest.NewTransport()
	store, err := testEnv(t).StoreVia(tr)
	if err != nil {
		t.Fatal(err)
	}
	keys := store.KeyStore(cosmos.KeyContainer)
	counting := &idemtest.Counting{Store: keys}
	svc := &idempotency.Service{Store: counting}
	scope := idempotency.Scope{Client: "anonymous", Operation: "SubmitOrder", Key: t.Name() + time.Now().Format(time.RFC3339Nano)}
	ok := func(context.Context) (idempotency.Response, error) { return idempotency.Response{Status: 201}, nil }
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ctx, charge := requestcharge.With(ctx)
	warmUp := len(tr.Exchanges())
	for _, path := range []struct {
		name string
		fp   string
		want []string
	}{
		{"first", "fp-1", []string{"CREATE", "REPLACE"}},
		{"replay", "fp-1", []string{"CREATE", "READ"}},
		{"mismatch", "fp-2", []string{"CREATE", "READ"}},
	} {
		before := len(tr.Exchanges())
		if _, err := svc.Execute(ctx, scope, idempotency.Fingerprint{Hash: path.fp}, ok); err != nil {
			t.Fatalf("%s: %v", path.name, err)
		}
		var kinds []string
		for _, x := range tr.Exchanges()[before:] {
			kinds = append(kinds, x.Kind)
		}
		calls := counting.Calls()
		if strings.Join(kinds, " ") != strings.Join(path.want, " ") || calls.Total() != int64(len(kinds)) ||
			calls != idemtest.RoundTrips[path.name] {
			t.Errorf("%s: requests %v for store calls %s; want %v, one per call as idemtest.RoundTrips says", path.name, kinds, calls, path.want)
		}
	}
	// Every request is billed to the invocation's charge, as orders' are
	// (the emulator bills 1 RU a request).
	if got, want := charge.Units(), float64(len(tr.Exchanges())-warmUp); got != want || want != 6 {
		t.Errorf("request charge %.2f RU for %v key requests, want 1 RU for each of 6", got, want)
	}
	// The completion was conditional on the claim's ETag.
	replaces := tr.Exchanges("REPLACE")
	creates := tr.Exchanges("CREATE")
	if len(replaces) != 1 || replaces[0].IfMatch == "" || len(creates) == 0 {
		t.Errorf("completion %+v after claim %+v: want a replace with If-Match", replaces, creates)
	}
}

// TestKeyStoreErrors: a failure that is not a conditional-write answer is
// an idempotency.KeyStoreError naming the operation and the key record.
func TestKeyStoreErrors(t *testing.T) {
	tr := cosmostest.NewTransport()
	store, err := testEnv(t).StoreVia(tr)
	if err != nil {
		t.Fatal(err)
	}
	keys := store.KeyStore(cosmos.KeyContainer)
	tr.Before(func(kind string, r *http.Request) *http.Response {
		return cosmostest.Answer(r, 400, `{"code":"BadRequest","message":"Message: {\"Errors\":[\"One of the specified inputs is invalid\"]}\nActivityId: x"}`)
	})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err = keys.Claim(ctx, idempotency.Record{ID: "rec-1", State: idempotency.Started})
	var se *idempotency.KeyStoreError
	if !errors.As(err, &se) || se.Transient() || se.Status != 400 || errors.Is(err, idempotency.ErrExists) ||
		err.Error() != `claim idempotency key rec-1: 400 Bad Request: BadRequest: {"Errors":["One of the specified inputs is invalid"]} (activity faked-by-cosmostest)` {
		t.Errorf("claim refused: %v; want a final StoreError with a one-line text", err)
	}
}

// BenchmarkKeyStoreExecute is what executeOnce adds to a request against the
// Cosmos endpoint under test, per path (two round trips each; see
// idemtest.RoundTrips): go test -run '^$' -bench KeyStoreExecute ./cosmos/
func BenchmarkKeyStoreExecute(b *testing.B) {
	svc := &idempotency.Service{Store: cosmosDB.Env(b).Keys}
	ctx := context.Background()
	work := func(context.Context) (idempotency.Response, error) {
		return idempotency.Response{Status: 201, Body: []byte(`{"orderId":"ORD-1","requestHash":"sha256:0f"}`)}, nil
	}
	scope := idempotency.Scope{Client: "anonymous", Operation: "SubmitOrder", Key: b.Name() + time.Now().Format(time.RFC3339Nano)}
	if _, err := svc.Execute(ctx, scope, idempotency.Fingerprint{Hash: "fp-1"}, work); err != nil {
		b.Fatal(err)
	}
	for _, path := range []struct {
		name    string
		fp      string
		outcome idempotency.Verdict
	}{{"first", "fp-1", idempotency.Executed}, {"replay", "fp-1", idempotency.Replayed}, {"mismatch", "fp-2", idempotency.Mismatched}} {
		b.Run(path.name, func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				s := scope
				if path.outcome == idempotency.Executed {
					s.Key = fmt.Sprintf("%s-%d", scope.Key, i)
				}
				if res, err := svc.Execute(ctx, s, idempotency.Fingerprint{Hash: path.fp}, work); err != nil || res.Verdict != path.outcome {
					b.Fatalf("%+v, %v; want %s", res, err, path.outcome)
				}
			}
		})
	}
}
