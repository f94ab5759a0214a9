package idempotency_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/ordersink/orders-consumer/idempotency"
	"github.com/ordersink/orders-consumer/idempotency/idemtest"
)

// BenchmarkExecute is the service's own cost per request over the in-memory
// store (the record's JSON encoding, the owner token, the judgement): what
// Execute adds to a request beside its Cosmos DB round trips.
func BenchmarkExecute(b *testing.B) {
	ctx := context.Background()
	resp := idempotency.Response{Status: 201, Headers: map[string]string{"Location": "/api/orders/ORD-1"},
		Body: []byte(`{"orderId":"ORD-1","requestHash":"sha256:0123456789abcdef"}`)}
	work := func(context.Context) (idempotency.Response, error) { return resp, nil }
	b.Run("first", func(b *testing.B) {
		s := &idempotency.Service{Store: idemtest.NewMemStore()}
		for i := 0; b.Loop(); i++ {
			if _, err := s.Execute(ctx, idempotency.Scope{Client: "anonymous", Operation: "SubmitOrder", Key: strconv.Itoa(i)}, idempotency.Fingerprint{Hash: fp}, work); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("replay", func(b *testing.B) {
		s := &idempotency.Service{Store: idemtest.NewMemStore()}
		if _, err := s.Execute(ctx, scope, idempotency.Fingerprint{Hash: fp}, work); err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			if res, err := s.Execute(ctx, scope, idempotency.Fingerprint{Hash: fp}, work); err != nil || res.Verdict != idempotency.Replayed {
				b.Fatal(res, err)
			}
		}
	})
	b.Run("mismatch", func(b *testing.B) {
		s := &idempotency.Service{Store: idemtest.NewMemStore()}
		if _, err := s.Execute(ctx, scope, idempotency.Fingerprint{Hash: fp}, work); err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			if res, err := s.Execute(ctx, scope, idempotency.Fingerprint{Hash: "other"}, work); err != nil || res.Verdict != idempotency.Mismatched {
				b.Fatal(res, err)
			}
		}
	})
}
