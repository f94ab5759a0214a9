package chaos

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ordersink/orders-consumer/cosmos/cosmostest"
	"github.com/ordersink/orders-consumer/testbed/faults"
	"github.com/ordersink/orders-consumer/testbed/orderstream"
)

// A short chaos run: a few hundred messages and some HTTP submissions, two
// kills, every fault kind, a kill and a lost answer aimed at key
// completions, the outbox publisher with a kill and a refused topic send,
// through the real handler; every invariant holds.
func TestShortChaosRun(t *testing.T) {
	rep, _ := shortRun(t, 2*time.Minute, Config{
		Messages: 300, Kills: 2, Rates: faults.Uniform(0.03), RetryAfter: 10 * time.Millisecond,
		SlowMin: 50 * time.Millisecond, SlowMax: 1500 * time.Millisecond, OperationTimeout: time.Second, Seed: 42,
		Submissions: orderstream.SubmitOptions{Orders: 30, Timeouts: 0.1, Concurrent: 0.1, ConcurrentSize: 4,
			Reused: 0.1, NewKeys: 0.1, Races: 0.1}, KeyKills: 1, KeyLostAnswers: 1, KeyLease: 10 * time.Second, SubmitDeadline: 4 * time.Second,
		PublisherKills: 1, PublisherSendFaults: 1,
	})
	if rep.Messages < 300 {
		t.Errorf("%d messages, want at least 300", rep.Messages)
	}
	if h := rep.HTTP; h == nil || h.KeyFaults.Kills != 1 || h.KeyFaults.LostAnswers != 1 || h.Answers.ByStatus[409] == 0 {
		t.Errorf("HTTP part %+v, want a kill and a lost answer on key completions, and 409s", h)
	}
	// 4 kills are aimed (2 + 1 on a key completion + 1 in a publisher
	// invocation), each followed by a restart; on a loaded machine one can
	// land while the handler restarts from another, and the worker books
	// only the kill that found a process (seen once in a soak's company).
	if w := rep.Worker; w.Kills < 3 || w.Kills > 4 || w.Starts != w.Kills+1 {
		t.Errorf("worker %+v, want 4 kills (3 when two met) and a start after each", rep.Worker)
	}
	if p := rep.Publisher; p == nil || p.Stats.Kills != 1 || p.Refused != 1 || p.Stats.Retries < 2 || len(p.SetAside) != 1 {
		t.Errorf("publisher %v, want a kill, a refused send, their retries and the poison set aside", p)
	}
	for _, f := range faults.Faults {
		if rep.Proxy.Faults[f] == 0 {
			t.Errorf("no %s fault was injected", f)
		}
	}
	if rep.Settlements["completion-lost"] == 0 {
		t.Error("no completion was lost")
	}
}

// A short run on three instances: it starts with one, scales out to three
// and back, the last one crashing; reads on another instance than the
// writer's lag behind its writes; the publisher's leases move between the
// instances; every invariant holds and the history is linearizable.
func TestShortChaosRunOnThreeInstances(t *testing.T) {
	rep, log := shortRun(t, 3*time.Minute, Config{
		Messages: 400, Kills: 2, Rates: faults.Uniform(0.01), RetryAfter: 10 * time.Millisecond,
		SlowMin: 50 * time.Millisecond, SlowMax: 500 * time.Millisecond, OperationTimeout: time.Second, Seed: 43,
		Instances: 3, Lag: 300 * time.Millisecond,
		Submissions: orderstream.SubmitOptions{Orders: 40, Timeouts: 0.1, Races: 0.1, NewKeys: 0.1},
		KeyLease:    10 * time.Second, SubmitDeadline: 4 * time.Second,
	})
	if !strings.Contains(log, "instance 3: crashes") || !strings.Contains(log, "instance 2: scaled in") {
		t.Errorf("the run did not scale out to three instances and back:\n%s", log)
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
}

// shortRun runs cfg through the handler built from the tree against the
// test's emulator, within timeout, and logs the report. A run that fails
// ends the test; an invariant violation fails it. It returns the report
// and the run's progress log.
func shortRun(t *testing.T, timeout time.Duration, cfg Config) (*Report, string) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the handler")
	}
	e := cosmosEnv(t)
	cfg.Endpoint, cfg.Key, cfg.Atomic = e.Endpoint, e.Key, !e.LocalEmulator
	cfg.AppRoot, cfg.HandlerPath = buildHandler(t)
	var log strings.Builder
	cfg.Log = &log
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	rep, err := Run(ctx, cfg)
	var out strings.Builder
	if rep != nil {
		rep.Print(&out)
	}
	t.Log("\n" + out.String())
	if err != nil {
		t.Fatalf("run: %v\n%s", err, log.String())
	}
	if n := rep.Findings.Violations(); n != 0 {
		t.Errorf("%d invariant violations", n)
	}
	return rep, log.String()
}

// buildHandler builds bin/handler's package into the test's temporary
// folder and returns the repository root and the executable.
func buildHandler(t *testing.T) (root, bin string) {
	t.Helper()
	root, err := cosmostest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	bin = filepath.Join(t.TempDir(), "handler")
	build := exec.Command("go", "build", "-o", bin, "./cmd/handler")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build the handler: %v\n%s", err, out)
	}
	return root, bin
}
