package bench

import (
	"context"
	"testing"
	"time"

	"github.com/ordersink/orders-consumer/testbed/faults"
)

// TestWideBatchLeavesThrottlingToTheSDK: a batch written all at once into a
// Cosmos that throttles 3 % of its writes still creates every order
// in one invocation, because the SDK retries each 429 after the delay Cosmos
// asks for; the handler adds no throttling of its own.
//
// The SDK gives a request 3 retries (azcore's default MaxRetries), so a
// write throttled on all 4 attempts fails and the test with it: at a fifth
// that happened in 3 of 20 runs (the warm-up's 200 writes and the phase's
// 100, each failing at 0.2^4). At 3 % one of the 300 fails in about one run
// in 4,000, and none is throttled at all (which the test also refuses) in
// about one in 9,000.
func TestWideBatchLeavesThrottlingToTheSDK(t *testing.T) {
	tg := target(t)
	var rates faults.Rates
	rates[faults.Throttle] = 0.03
	// Every answer held back 200 ms: the writes of the batch then overlap
	// however fast the emulator answers and however busy the machine is
	// (at 20 ms, as from an account in the region, a make test with every
	// package running saw a peak of 40), and the peak below shows that
	// they were sent at once.
	p, err := faults.StartProxy(faults.ProxyConfig{Upstream: tg.Endpoint, Rates: rates, Seed: 16, Latency: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	tg.Endpoint = p.URL()
	v, err := Handler(tg, 100, 1, 100)
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	ph, err := v.RunPhase(context.Background(), "TT-"+RunID(), 100)
	if err != nil {
		t.Fatal(err)
	}
	if ph.Errors != 0 || !ph.Outcomes.Only("created", 100) {
		t.Errorf("%d errors (first %v), outcomes %s: want every order created in its first invocation", ph.Errors, ph.FirstErr, ph.Outcomes)
	}
	c := p.Counts()
	if c.Faults[faults.Throttle] == 0 || c.Resent[faults.Throttle] != c.Faults[faults.Throttle] {
		t.Errorf("%d writes throttled, %d sent again by the SDK: want every throttled write retried", c.Faults[faults.Throttle], c.Resent[faults.Throttle])
	}
	if peak := ph.Requests.Peak; peak < 50 {
		t.Errorf("at most %d requests in flight: the batch was not written all at once", peak)
	}
}
