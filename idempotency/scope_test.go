package idempotency_test

import (
	"regexp"
	"testing"

	"github.com/ordersink/orders-consumer/idempotency"
)

func TestScopeID(t *testing.T) {
	base := idempotency.Scope{Client: "key:0123456789abcdef", Operation: "SubmitOrder", Key: "a/b#c?d\\e"}
	// The id is stored, so its rule may never change: SHA-256 over each
	// part as an 8-byte big-endian length and the bytes (computed apart).
	if got, want := base.ID(), "03f179b37298461b88c350b50c70471a2cc694632b81fee3355c13db7672eec3"; got != want {
		t.Errorf("id %s, want %s", got, want)
	}
	if !regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(base.ID()) {
		t.Errorf("id %q is not 64 lower-case hex digits", base.ID())
	}
	distinct := []idempotency.Scope{
		base,
		{Client: "key:0123456789abcdef", Operation: "SubmitOrder", Key: "a/b#c?d\\f"},
		{Client: "key:0123456789abcdeg", Operation: "SubmitOrder", Key: base.Key},
		{Client: base.Client, Operation: "GetOrder", Key: base.Key},
		// Concatenations that agree: only the length prefixes tell them apart.
		{Client: "ab", Operation: "c", Key: "d"},
		{Client: "a", Operation: "bc", Key: "d"},
		{Client: "a", Operation: "b", Key: "cd"},
	}
	seen := map[string]idempotency.Scope{}
	for _, s := range distinct {
		if prev, ok := seen[s.ID()]; ok {
			t.Errorf("scopes %+v and %+v share id %s", prev, s, s.ID())
		}
		seen[s.ID()] = s
	}
	if base.ID() != (idempotency.Scope{Client: base.Client, Operation: base.Operation, Key: base.Key}).ID() {
		t.Error("the id of one scope changes")
	}
}
