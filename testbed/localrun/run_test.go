package localrun

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ordersink/orders-consumer/cosmos/cosmostest"
	"github.com/ordersink/orders-consumer/testbed/chaos"
	"github.com/ordersink/orders-consumer/testbed/faults"
	"github.com/ordersink/orders-consumer/testbed/hostemu"
	"github.com/ordersink/orders-consumer/testbed/orderstream"
	"github.com/ordersink/orders-consumer/testbed/rig"
)

var (
	cosmosDB = cosmostest.NewShared("localrun")
	binDir   string // what buildHandler built, removed after the tests
	// buildHandler builds the real handler once per test binary.
	buildHandler = sync.OnceValues(func() (string, error) {
		dir, err := os.MkdirTemp("", "localrun-")
		if err != nil {
			return "", err
		}
		binDir = dir
		return goBuild(dir, "handler")
	})
)

func TestMain(m *testing.M) {
	code := cosmosDB.Main(m)
	os.RemoveAll(binDir)
	os.Exit(code)
}

// goBuild builds the repository's ./cmd/name into dir.
func goBuild(dir, name string) (string, error) {
	root, err := cosmostest.RepoRoot()
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, name)
	build := exec.Command("go", "build", "-o", bin, "./cmd/"+name)
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/%s: %v\n%s", name, err, out)
	}
	return bin, nil
}

// endToEnd is what a run of the real handler needs: the repository's root
// (its function app), the handler and an environment that reaches Cosmos DB
// (skipped with -short).
func endToEnd(t *testing.T) (root, handler string, environ []string) {
	t.Helper()
	env := cosmosDB.Env(t)
	root, err := cosmostest.RepoRoot()
	if err == nil {
		handler, err = buildHandler()
	}
	if err != nil {
		t.Fatal(err)
	}
	return root, handler, append(os.Environ(), "COSMOS_ENDPOINT="+env.Endpoint, "COSMOS_KEY="+env.Key, "LOG_LEVEL=warn")
}

// stream is a short stream with every kind of fault: duplicates (same bytes,
// new meta, re-serialised), bursts, mismatches (before, after and racing the
// original), invalid bodies, lost completions.
func stream(t *testing.T, seed uint64) *orderstream.Stream {
	t.Helper()
	s, err := orderstream.Generate(orderstream.Options{Orders: 250, Seed: seed, Duplicates: 0.2, Bursts: 0.06, BurstSize: 4,
		Mismatches: 0.06, Invalid: 0.04, LostCompletions: 0.06})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func runStream(t *testing.T, s *orderstream.Stream, seed uint64, o Options) *chaos.Report {
	t.Helper()
	rep := deliver(t, s, seed, o)
	if !rep.OK() {
		t.Fatal("the invariant does not hold")
	}
	return checkFigures(t, rep, s)
}

// deliver runs s through the real handler and returns the report, checked
// but not asserted.
func deliver(t *testing.T, s *orderstream.Stream, seed uint64, o Options) *chaos.Report {
	t.Helper()
	o.Messages, o.Injected, o.Seed = s.Messages, &s.Injected, seed
	o.OutDir = t.TempDir()
	return runEndToEnd(t, o)
}

// runEndToEnd runs o with the real handler (endToEnd), within 2 minutes
// unless o says otherwise, and logs its report.
func runEndToEnd(t *testing.T, o Options) *chaos.Report {
	t.Helper()
	o.AppRoot, o.Executable, o.Environ = endToEnd(t)
	o.Timeout = cmp.Or(o.Timeout, 2*time.Minute)
	var log bytes.Buffer
	o.Log = &log
	ctx, cancel := context.WithTimeout(context.Background(), o.Timeout)
	defer cancel()
	rep, err := Run(ctx, o)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, log.String())
	}
	var out bytes.Buffer
	rep.Print(&out)
	t.Logf("%s\n%s", log.String(), out.String())
	return rep
}

// checkFigures compares a run's figures with what its stream injected.
func checkFigures(t *testing.T, rep *chaos.Report, s *orderstream.Stream) *chaos.Report {
	t.Helper()
	in := s.Injected
	switch {
	case rep.StoredOrders != rep.Orders || rep.StoredOrders != in.Orders:
		t.Errorf("stored %d orders, want %d", rep.StoredOrders, rep.Orders)
	case rep.MismatchDeliveries < in.Mismatches || rep.MismatchesParked != rep.MismatchDeliveries:
		t.Errorf("%d mismatch deliveries, %d parked; want at least the %d injected, all parked", rep.MismatchDeliveries, rep.MismatchesParked, in.Mismatches)
	case rep.InvalidParked < in.Invalid || rep.DuplicatesAbsorbed < in.Duplicates:
		t.Errorf("invalid parked %d (injected %d), duplicates %d (injected %d)", rep.InvalidParked, in.Invalid, rep.DuplicatesAbsorbed, in.Duplicates)
	case rep.LostCompletions != in.LostCompletions:
		t.Errorf("%d lost completions, want the %d injected", rep.LostCompletions, in.LostCompletions)
	}
	return rep
}

func TestEndToEndProcessOrder(t *testing.T) {
	const seed = 11
	s := stream(t, seed)
	// A body that is not UTF-8: ProcessOrder binds its trigger as binary, so
	// the body arrives as base64 and the handler parks it as malformed
	// instead of the delivery failing before the handler ten times.
	s.Messages = append(s.Messages[:100:100], append([]*hostemu.Message{{MessageID: "BAD-UTF8",
		Body: []byte("{\"orderId\":\"BAD-UTF8\xff\"}"), ContentType: "application/json"}}, s.Messages[100:]...)...)
	rep := runStream(t, s, seed, Options{Functions: []string{"ProcessOrder"}, HandlerKills: 2})
	if rep.DeadLetters != 0 || rep.Worker.Kills != 2 || rep.Worker.Starts != 3 || rep.InvalidParked < s.Injected.Invalid+1 {
		t.Errorf("dead letters %d, kills %d, starts %d, invalid parked %d; want 0, 2, 3, at least %d",
			rep.DeadLetters, rep.Worker.Kills, rep.Worker.Starts, rep.InvalidParked, s.Injected.Invalid+1)
	}
}

func TestEndToEndProcessOrderBatch(t *testing.T) {
	// ProcessOrderBatch is disabled by app setting; naming it switches it on
	// and ProcessOrder off, as an operator would.
	// Two batches in flight (two host instances), so a kill meets one.
	rep := runStream(t, stream(t, 12), 12, Options{Functions: []string{"ProcessOrderBatch"},
		MaxMessageBatchSize: 32, BatchesInFlight: 2, HandlerKills: 2})
	if !rep.Batch || rep.Invocations >= rep.Messages/2 || rep.DeadLetters != 0 || rep.Worker.Kills != 2 {
		t.Errorf("batch %v: %d invocations for %d messages, %d dead letters, %d kills", rep.Batch, rep.Invocations, rep.Messages, rep.DeadLetters, rep.Worker.Kills)
	}
}

// A short Cosmos outage in a run: the handler reaches Cosmos through the
// fault proxy, the outage holds some orders, and the summary has its figures.
func TestEndToEndOutage(t *testing.T) {
	s, err := orderstream.Generate(orderstream.Options{Orders: 150, Seed: 13, Duplicates: 0.1})
	if err != nil {
		t.Fatal(err)
	}
	rep := runStream(t, s, 13, Options{Functions: []string{"ProcessOrder"},
		Outages: []faults.Outage{{Kind: faults.Unreachable, After: 0.2, For: 1500 * time.Millisecond}}})
	if len(rep.Findings.Recoveries) != 1 {
		t.Fatalf("recoveries %+v, want one outage", rep.Findings.Recoveries)
	}
	r := rep.Findings.Recoveries[0]
	if r.Held == 0 || r.HeldCreated+r.HeldGivenUp < r.Held || r.FirstCreate < 0 || r.LastHeldCreate < 0 {
		t.Errorf("outage %s: want orders held during it and created after it", r)
	}
}

// The emulator holds the real handler to the queue's lock: told the lock is
// a minute (QUEUE_LOCK_DURATION) while the queue's is 2 s, the batch
// function holds its batches through an outage past the lock; every
// delivery whose lock expired comes back, the idempotent consumer absorbs
// them, and only the clock check sees it. The outage lasts until a lock
// has expired (an event: an outage of 5 s could end before the first batch
// outlived its lock when the handler was slow to start).
func TestEndToEndBatchPastItsLock(t *testing.T) {
	s, err := orderstream.Generate(orderstream.Options{Orders: 100, Seed: 17})
	if err != nil {
		t.Fatal(err)
	}
	expired := make(chan struct{})
	rep := deliver(t, s, 17, Options{Functions: []string{"ProcessOrderBatch"}, MaxMessageBatchSize: 20,
		Settings: []string{"QUEUE_LOCK_DURATION=1m"}, Clocks: hostemu.Clocks{LockDuration: 2 * time.Second},
		// From the start: on a fast store the whole stream can settle
		// before an outage due later has begun.
		Outages: []faults.Outage{{Kind: faults.Unreachable, After: 0, Until: expired}},
		Watch:   closeWhen(expired, func(q hostemu.QueueCounts) bool { return q.ExpiredLocks > 0 })})
	if rep.Queue.ExpiredLocks == 0 || rep.StoredOrders != 100 {
		t.Fatalf("expired locks %d, stored %d; want batches past their lock and every order stored once", rep.Queue.ExpiredLocks, rep.StoredOrders)
	}
	for _, c := range rep.Findings.Checks {
		clock := strings.HasPrefix(c.Name, "every invocation answered within the platform's clocks")
		if clock != (len(c.Violations) > 0) {
			t.Errorf("%s: violations %q; want only the clock check to fail", c.Name, c.Violations)
		}
	}
}

// The HTTP API beside the queue: orders submitted to SubmitOrder by two
// clients that time out, send one key several times at once, reuse a key
// with another payload, resend an order under a new key and race each
// other for an orderId; the HTTP checks cover what the requests stored,
// the queue's checks the stream.
func TestEndToEndHTTPSubmissions(t *testing.T) {
	subs, in, err := orderstream.GenerateSubmissions(orderstream.SubmitOptions{Orders: 40, Seed: 19, Timeouts: 0.2,
		Concurrent: 0.15, ConcurrentSize: 6, Reused: 0.15, NewKeys: 0.15, Races: 0.15})
	if err != nil {
		t.Fatal(err)
	}
	s, err := orderstream.Generate(orderstream.Options{Orders: 100, Seed: 19, Duplicates: 0.1})
	if err != nil {
		t.Fatal(err)
	}
	rep := deliver(t, s, 19, Options{Functions: []string{"ProcessOrder"}, HTTPAddr: "127.0.0.1:0",
		FunctionKeys: map[string]string{"default": "test-key"}, Submissions: subs, SubmitInjected: &in})
	if !rep.OK() {
		t.Fatal("the invariant does not hold")
	}
	httpChecks := 0
	for _, c := range rep.Findings.Checks {
		if strings.HasPrefix(c.Name, "HTTP:") && c.Checked > 0 {
			httpChecks++
		}
	}
	if rep.HTTP == nil {
		t.Fatal("the report has no HTTP figures")
	}
	c := rep.HTTP.Answers
	switch {
	case httpChecks != 6:
		t.Errorf("%d HTTP checks ran with something to check, want 6 (chaos.SubmitChecks and ReadBackCheck)", httpChecks)
	case rep.StoredOrders != 100:
		t.Errorf("counted %d stored orders, want the stream's 100 (the HTTP orders are checked apart)", rep.StoredOrders)
	case c.ByStatus[201] == 0 || c.ByStatus[200] == 0 || c.ByStatus[409] < in.Races || c.ByStatus[422] < in.Reused || c.Replays == 0:
		t.Errorf("figures %s: want every injected fault seen", c)
	}
}

// closeWhen is a Watch that closes ch once the run's queue counts meet
// cond: it ends an outage (faults.Outage.Until) on what happened.
func closeWhen(ch chan struct{}, cond func(hostemu.QueueCounts) bool) func(*rig.Live) func() {
	return func(l *rig.Live) func() {
		ctx, cancel := context.WithCancel(context.Background())
		var waiting sync.WaitGroup
		waiting.Go(func() {
			if faults.WaitFor(ctx, func() bool { return cond(l.Queue.Counts()) }) {
				close(ch)
			}
		})
		return func() { cancel(); waiting.Wait() }
	}
}
