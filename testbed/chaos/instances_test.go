package chaos

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ordersink/orders-consumer/testbed/faults"
	"github.com/ordersink/orders-consumer/testbed/orderstream"
)

// A short run on three instances: it starts with one, scales out to three
// and back, the last one crashing; reads on another instance than the
// writer's lag behind its writes; the publisher's leases move between the
// instances; every invariant holds and the history is linearizable.
func TestShortChaosRunOnThreeInstances(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the handler")
	}
	e := cosmosEnv(t)
	root, bin := buildHandler(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var log strings.Builder
	rep, err := Run(ctx, Config{
		Endpoint: e.Endpoint, Key: e.Key, Atomic: !e.LocalEmulator, AppRoot: root, HandlerPath: bin,
		Messages: 400, Kills: 2, Rates: faults.Uniform(0.01), RetryAfter: 10 * time.Millisecond,
		SlowMin: 50 * time.Millisecond, SlowMax: 500 * time.Millisecond, OperationTimeout: time.Second, Seed: 43,
		Instances: 3, Lag: 300 * time.Millisecond,
		Submissions: orderstream.SubmitOptions{Orders: 40, Timeouts: 0.1, Races: 0.1, NewKeys: 0.1},
		KeyLease:    10 * time.Second, SubmitDeadline: 4 * time.Second, Publisher: true, Log: &log,
	})
	var out strings.Builder
	if rep != nil {
		rep.Print(&out)
	}
	t.Log("\n" + out.String())
	if err != nil {
		t.Fatalf("run: %v\n%s", err, log.String())
	}
	if !strings.Contains(log.String(), "instance 3: crashes") || !strings.Contains(log.String(), "instance 2: scaled in") {
		t.Errorf("the run did not scale out to three instances and back:\n%s", log.String())
	}
	if rep.Proxy.StaleReads == 0 {
		t.Error("no read was answered by a lagging replica")
	}
	if p := rep.Publisher; p == nil || p.Stats.Leases != 2 || p.Stats.TakenOver == 0 {
		t.Errorf("publisher %v, want its 2 leases moved between instances", p)
	}
	if h := rep.Findings.History; h == nil || h.Ops == 0 {
		t.Errorf("history %+v, want it checked", h)
	}
	if n := rep.Findings.Violations(); n != 0 {
		t.Errorf("%d invariant violations", n)
	}
}
