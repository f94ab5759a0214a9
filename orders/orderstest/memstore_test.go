package orderstest_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ordersink/orders-consumer/orders"
	"github.com/ordersink/orders-consumer/orders/orderstest"
)

func TestMemStore(t *testing.T) {
	orderstest.TestStore(t, orderstest.Features{AtomicBatches: true}, func(*testing.T) orderstest.Backend {
		return orderstest.NewMemStore()
	})
}

// claimsTwice creates an order again instead of returning its fingerprint.
type claimsTwice struct{ *orderstest.MemStore }

func (s claimsTwice) CreateOrder(ctx context.Context, b *orders.AcceptanceBatch) (*orders.StoredFingerprint, error) {
	_, err := s.MemStore.CreateOrder(ctx, b)
	return nil, err
}

// ignoresContext writes after the invocation's deadline has passed.
type ignoresContext struct{ *orderstest.MemStore }

func (s ignoresContext) CreateOrder(_ context.Context, b *orders.AcceptanceBatch) (*orders.StoredFingerprint, error) {
	return s.MemStore.CreateOrder(context.Background(), b)
}

// rewritesEvent stores an event other than the one it was given.
type rewritesEvent struct{ *orderstest.MemStore }

func (s rewritesEvent) CreateOrder(ctx context.Context, b *orders.AcceptanceBatch) (*orders.StoredFingerprint, error) {
	c := *b
	c.Documents = slices.Clone(b.Documents)
	if len(c.Documents) != 2 {
		return nil, fmt.Errorf("rewritesEvent: %d documents, want the order and its event", len(c.Documents))
	}
	c.Documents[1].Body = bytes.Replace(c.Documents[1].Body, []byte(`"OrderAccepted"`), []byte(`"OrderCreated"`), 1)
	return s.MemStore.CreateOrder(ctx, &c)
}

// appliesStale says every status change was applied.
type appliesStale struct{ *orderstest.MemStore }

func (s appliesStale) ApplyStatus(ctx context.Context, c orders.StatusChange, messageID string, at time.Time) (orders.StatusApplied, error) {
	r, err := s.MemStore.ApplyStatus(ctx, c, messageID, at)
	r.Applied = err == nil
	return r, err
}

// brokenStores each break one rule; the suite must fail each on that rule.
var brokenStores = map[string]struct {
	store   func() orderstest.Backend
	failsOn string
}{
	"claimsTwice":    {func() orderstest.Backend { return claimsTwice{orderstest.NewMemStore()} }, "RedeliveryReturnsStoredFingerprint"},
	"ignoresContext": {func() orderstest.Backend { return ignoresContext{orderstest.NewMemStore()} }, "EndedContextIsTransient"},
	"rewritesEvent":  {func() orderstest.Backend { return rewritesEvent{orderstest.NewMemStore()} }, "CreateWritesTheDocumentsAsGiven"},
	"appliesStale":   {func() orderstest.Backend { return appliesStale{orderstest.NewMemStore()} }, "StatusAppliesOnlyNewerVersions"},
}

// TestSuiteFailsBrokenStores runs the suite, in a child process, over stores
// that each break one rule, so a suite that passes everything cannot hide.
func TestSuiteFailsBrokenStores(t *testing.T) {
	if name := os.Getenv("ORDERSTEST_BROKEN_STORE"); name != "" {
		orderstest.TestStore(t, orderstest.Features{AtomicBatches: true}, func(*testing.T) orderstest.Backend {
			return brokenStores[name].store()
		})
		return
	}
	for name, b := range brokenStores {
		t.Run(name, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestSuiteFailsBrokenStores$", "-test.v")
			cmd.Env = append(os.Environ(), "ORDERSTEST_BROKEN_STORE="+name)
			out, err := cmd.CombinedOutput()
			if err == nil {
				t.Fatalf("the suite passed a store that breaks %s:\n%s", b.failsOn, out)
			}
			if !strings.Contains(string(out), "--- FAIL: TestSuiteFailsBrokenStores/"+b.failsOn) {
				t.Errorf("the suite did not fail %s:\n%s", b.failsOn, out)
			}
		})
	}
}
