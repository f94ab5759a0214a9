package idempotency_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/ordersink/orders-consumer/idempotency"
	"github.com/ordersink/orders-consumer/idempotency/idemtest"
)

// A key record keeps the version of the fingerprint it was stored with, and
// a retry is compared under that version: a release that changes the rule
// still replays what its predecessor stored (docs/adr/0011).
func TestRetryIsComparedUnderTheStoredVersion(t *testing.T) {
	const v1, v2 = "sha256:v1-of-the-payload", "sha256:v2-of-the-payload"
	under := func(version int) (string, error) {
		switch version {
		case 1:
			return v1, nil
		case 2:
			return v2, nil
		}
		return "", fmt.Errorf("unknown version %d", version)
	}
	for _, tc := range []struct {
		name    string
		stored  idempotency.Fingerprint
		retry   idempotency.Fingerprint
		verdict idempotency.Verdict
	}{
		{"same version", idempotency.Fingerprint{Hash: v1, Version: 1}, idempotency.Fingerprint{Hash: v1, Version: 1}, idempotency.Replayed},
		{"stored by the older rule", idempotency.Fingerprint{Hash: v1, Version: 1}, idempotency.Fingerprint{Hash: v2, Version: 2, Under: under}, idempotency.Replayed},
		{"stored by the newer rule", idempotency.Fingerprint{Hash: v2, Version: 2}, idempotency.Fingerprint{Hash: v1, Version: 1, Under: under}, idempotency.Replayed},
		{"no older rule known", idempotency.Fingerprint{Hash: v1, Version: 1}, idempotency.Fingerprint{Hash: v2, Version: 2}, idempotency.Mismatched},
		{"another payload under the older rule", idempotency.Fingerprint{Hash: "sha256:other", Version: 1}, idempotency.Fingerprint{Hash: v2, Version: 2, Under: under}, idempotency.Mismatched},
		{"the older rule fails", idempotency.Fingerprint{Hash: v1, Version: 3}, idempotency.Fingerprint{Hash: v2, Version: 2, Under: under}, idempotency.Mismatched},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := idemtest.NewMemStore()
			s := &idempotency.Service{Store: store}
			if _, err := s.Execute(context.Background(), scope, tc.stored, okWork); err != nil {
				t.Fatal(err)
			}
			r, err := store.Read(context.Background(), scope.ID())
			if err != nil || r.RequestHash != tc.stored.Hash || r.HashVersion != max(tc.stored.Version, 1) {
				t.Fatalf("stored record %+v, %v; want hash %s version %d", r, err, tc.stored.Hash, max(tc.stored.Version, 1))
			}
			ran := false
			res, err := s.Execute(context.Background(), scope, tc.retry, func(context.Context) (idempotency.Response, error) {
				ran = true
				return ok, nil
			})
			if err != nil || res.Verdict != tc.verdict || ran {
				t.Errorf("retry: %v, %v, work ran %v; want %v and no work", res.Verdict, err, ran, tc.verdict)
			}
		})
	}
	// A record stored before versions were kept has none: the first rule.
	store := idemtest.NewMemStore()
	resp := ok
	if _, err := store.Claim(context.Background(), idempotency.Record{ID: scope.ID(), Client: scope.Client, Operation: scope.Operation,
		Key: scope.Key, RequestHash: v1, State: idempotency.Succeeded, Response: &resp, TTL: 60}); err != nil {
		t.Fatal(err)
	}
	res, err := (&idempotency.Service{Store: store}).Execute(context.Background(), scope, idempotency.Fingerprint{Hash: v2, Version: 2, Under: under}, okWork)
	if err != nil || res.Verdict != idempotency.Replayed {
		t.Errorf("retry of a record without a version: %v, %v; want it replayed (version 1)", res.Verdict, err)
	}
}
