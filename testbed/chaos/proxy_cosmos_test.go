package chaos

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ordersink/orders-consumer/cosmos"
	"github.com/ordersink/orders-consumer/cosmos/cosmostest"
	"github.com/ordersink/orders-consumer/orders"
	"github.com/ordersink/orders-consumer/orders/orderstest"
	"github.com/ordersink/orders-consumer/testbed/faults"
	"github.com/ordersink/orders-consumer/testbed/verify"
)

func testOrder(t *testing.T, id string) *orders.Order {
	t.Helper()
	o, err := orders.ParseOrder(orderstest.ExampleBodyWithID(id))
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// The SDK, through the proxy, reaches Cosmos only through the proxy (the
// account's advertised endpoints are rewritten), and a create whose answer
// is lost is there on the next attempt, which sees it as a duplicate.
func TestProxyWithTheCosmosSDK(t *testing.T) {
	e := cosmosEnv(t)
	ledger := verify.NewLedger()
	p, store := storeViaProxy(t, e, faults.ProxyConfig{Observe: ledger.Observe})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	acc := orders.Acceptance{MessageID: "m", AcceptedAt: time.Now()}

	first := testOrder(t, "CHAOS-SDK-1")
	if stored, err := store.CreateOrder(ctx, orderstest.Batch(t, first, acc)); err != nil || stored != nil {
		t.Fatalf("create through the proxy: %v, %v", stored, err)
	}
	if c := p.Counts(); c.Requests-c.Metadata < 1 {
		t.Fatalf("counts %+v: the batch did not go through the proxy", c)
	}

	if err := p.SetRates(only(faults.LostAnswer)); err != nil {
		t.Fatal(err)
	}
	lost := testOrder(t, "CHAOS-SDK-2")
	_, err := store.CreateOrder(ctx, orderstest.Batch(t, lost, acc))
	var se *orders.StoreError
	if !errors.As(err, &se) || !se.Transient() {
		t.Fatalf("create with its answer lost: %v, want a transient store error", err)
	}
	if err := p.SetRates(faults.Rates{}); err != nil {
		t.Fatal(err)
	}
	stored, err := store.CreateOrder(ctx, orderstest.Batch(t, lost, acc))
	if err != nil || stored == nil || stored.Hash != lost.Hash {
		t.Fatalf("retry after the lost answer: %+v, %v; want the stored fingerprint %s", stored, err, lost.Hash)
	}
	created := ledger.Created()
	for _, o := range []*orders.Order{first, lost} {
		if got := created[o.ID]; len(got) != 1 || got[0] != o.Hash {
			t.Errorf("ledger for %s: %v, want exactly one create of %s", o.ID, got, o.Hash)
		}
	}
	if ledger.Unseen(faults.LostAnswer) != 1 {
		t.Errorf("creates with a lost answer: %d, want 1", ledger.Unseen(faults.LostAnswer))
	}
}

// Each fault reaches the store as the error the consumer retries by
// redelivery; a 429 is retried inside the SDK, honouring x-ms-retry-after-ms.
func TestProxyFaultsAsTheStoreSeesThem(t *testing.T) {
	e := cosmosEnv(t)
	// A slow answer is held back until the proxy closes, and the client
	// gives up once the proxy holds it (an event, where a deadline of 100 ms
	// against a hold of 300 ms raced on a loaded machine); the proxy's
	// Observe, which comes before the hold, counts it.
	var slow atomic.Int64
	heldBack := make(chan struct{}, 1)
	p, store := storeViaProxy(t, e, faults.ProxyConfig{SlowMin: time.Hour, SlowMax: time.Hour,
		Observe: func(x faults.Exchange) {
			if x.Fault == faults.Slow {
				slow.Add(1)
				select {
				case heldBack <- struct{}{}:
				default:
				}
			}
		}})
	acc := orders.Acceptance{MessageID: "m", AcceptedAt: time.Now()}
	// Warm up: the account and container reads happen on first use.
	if _, err := store.CreateOrder(context.Background(), orderstest.Batch(t, testOrder(t, "CHAOS-FAULT-warm"), acc)); err != nil {
		t.Fatal(err)
	}
	for _, f := range faults.Faults {
		t.Run(f.String(), func(t *testing.T) {
			if err := p.SetRates(only(f)); err != nil {
				t.Fatal(err)
			}
			before, slowBefore := p.Counts().Faults[f], slow.Load()
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if f == faults.Slow {
				go func() {
					select {
					case <-heldBack:
						cancel()
					case <-ctx.Done():
					}
				}()
			}
			_, err := store.CreateOrder(ctx, orderstest.Batch(t, testOrder(t, "CHAOS-FAULT-"+f.String()), acc))
			if !orders.IsTransient(err) || err == nil {
				t.Errorf("CreateOrder under %s: %v, want a transient error", f, err)
			}
			injected := p.Counts().Faults[f] - before
			if f == faults.Slow {
				injected = slow.Load() - slowBefore
			}
			want := int64(1)
			if f == faults.Throttle {
				want = 4 // the first try and the SDK's 3 retries
			}
			if injected != want {
				t.Errorf("%s injected %d times, want %d", f, injected, want)
			}
			if f == faults.Throttle && p.Counts().Resent[faults.Throttle] != 3 {
				t.Errorf("resent after 429: %d, want the SDK's 3 retries", p.Counts().Resent[faults.Throttle])
			}
		})
	}
}

// storeViaProxy starts the fault proxy of cfg in front of e's endpoint and
// opens e's database through it.
func storeViaProxy(t *testing.T, e *cosmostest.Env, cfg faults.ProxyConfig) (*faults.Proxy, *cosmos.Store) {
	t.Helper()
	cfg.Upstream = e.Endpoint
	p, err := faults.StartProxy(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	store, err := cosmos.Open(cosmos.Options{Endpoint: p.URL(), Key: e.Key}, e.Database, e.Container)
	if err != nil {
		t.Fatal(err)
	}
	return p, store
}

// only is a rate of 1 for f and 0 for the other faults.
func only(f faults.Fault) faults.Rates {
	var r faults.Rates
	r[f] = 1
	return r
}
