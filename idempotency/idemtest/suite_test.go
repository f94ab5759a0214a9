package idemtest_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/ordersink/orders-consumer/idempotency"
	"github.com/ordersink/orders-consumer/idempotency/idemtest"
)

// replacesBlindly replaces whatever version is stored: no fencing.
type replacesBlindly struct{ *idemtest.MemStore }

func (s replacesBlindly) Replace(ctx context.Context, r idempotency.Record, _ string) (string, error) {
	cur, err := s.Read(ctx, r.ID)
	if err != nil {
		return "", idempotency.ErrFenced
	}
	return s.MemStore.Replace(ctx, r, cur.ETag)
}

// claimsTwice overwrites an existing record instead of refusing the claim.
type claimsTwice struct{ *idemtest.MemStore }

func (s claimsTwice) Claim(ctx context.Context, r idempotency.Record) (string, error) {
	etag, err := s.MemStore.Claim(ctx, r)
	if errors.Is(err, idempotency.ErrExists) {
		cur, _ := s.Read(ctx, r.ID)
		return s.MemStore.Replace(ctx, r, cur.ETag)
	}
	return etag, err
}

// releasesBlindly deletes whatever version is stored.
type releasesBlindly struct{ *idemtest.MemStore }

func (s releasesBlindly) Release(ctx context.Context, id, _ string) error {
	cur, err := s.Read(ctx, id)
	if err != nil {
		return idempotency.ErrFenced
	}
	return s.MemStore.Release(ctx, id, cur.ETag)
}

// brokenStores each break one rule; the suites must fail each on that rule.
var brokenStores = map[string]struct {
	store   func() idemtest.Backend
	failsOn []string
}{
	"replacesBlindly": {func() idemtest.Backend { return replacesBlindly{idemtest.NewMemStore()} },
		[]string{"TestStore/StaleCompletionIsFenced", "TestStore/TakeOverWinsOnce", "TestService/StaleCompletionIsFenced"}},
	"claimsTwice": {func() idemtest.Backend { return claimsTwice{idemtest.NewMemStore()} },
		[]string{"TestStore/ClaimOfExistingKeyFails", "TestStore/ConcurrentClaimsWinOnce", "TestService/FirstExecutesThenReplays", "TestService/ConcurrentSameKeyRunsOnce"}},
	"releasesBlindly": {func() idemtest.Backend { return releasesBlindly{idemtest.NewMemStore()} },
		[]string{"TestStore/ReleaseWithStaleETagIsFenced"}},
}

// TestSuitesFailBrokenStores runs both suites, in a child process, over
// stores that each break one rule, so suites that pass everything cannot
// hide.
func TestSuitesFailBrokenStores(t *testing.T) {
	if name := os.Getenv("IDEMTEST_BROKEN_STORE"); name != "" {
		newStore := func(*testing.T) idemtest.Backend { return brokenStores[name].store() }
		t.Run("TestStore", func(t *testing.T) {
			idemtest.TestStore(t, idemtest.Features{ReadOfMissingIsNotFound: true}, newStore)
		})
		t.Run("TestService", func(t *testing.T) { idemtest.TestService(t, newStore) })
		return
	}
	for name, b := range brokenStores {
		t.Run(name, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestSuitesFailBrokenStores$", "-test.v")
			cmd.Env = append(os.Environ(), "IDEMTEST_BROKEN_STORE="+name)
			out, err := cmd.CombinedOutput()
			if err == nil {
				t.Fatalf("the suites passed a store that breaks %v:\n%s", b.failsOn, out)
			}
			for _, test := range b.failsOn {
				if !strings.Contains(string(out), "--- FAIL: TestSuitesFailBrokenStores/"+test) {
					t.Errorf("the suites did not fail %s:\n%s", test, out)
				}
			}
		})
	}
}
