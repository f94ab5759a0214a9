package chaos

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ordersink/orders-consumer/orders/orderstest"
	"github.com/ordersink/orders-consumer/testbed/faults"
	"github.com/ordersink/orders-consumer/testbed/hostemu"
	"github.com/ordersink/orders-consumer/testbed/rig"
	"github.com/ordersink/orders-consumer/testbed/verify"
)

// The stall of make chaos seed 278966 (docs/evidence/chaos.md, "The former
// five-minute stall"), made to happen: the handler is killed, and the
// first document request of the restarted process reaches Cosmos DB just
// before a 403 window opens, its answer held back (a slow answer) while the
// requests after it are refused. The queue must move again within the
// recovery bound of the window's end, not after the SDK's five-minute cache
// of the refused account read the restarted Store's replacement client made.
func TestRestartAtTheStartOfA403Window(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the handler")
	}
	e := cosmosEnv(t)
	root, bin := buildHandler(t)
	app, err := hostemu.LoadApp(root)
	if err != nil {
		t.Fatal(err)
	}
	stream, err := generate(400, 278966)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeoutCause(context.Background(), 2*time.Minute, errors.New("the run took over 2 minutes"))
	defer cancel()
	cfg, rep := Config{Endpoint: e.Endpoint, Key: e.Key, OperationTimeout: DefaultOperationTimeout}, &Report{}
	_, drop, err := prepareDatabase(ctx, cfg, rep, false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(drop)
	var (
		output  orderstest.Buffer
		mu      sync.Mutex
		hostLog []string
	)
	runCtx, stopRun := context.WithCancelCause(ctx)
	defer stopRun(nil)
	w := &stallWindow{opened: make(chan time.Time, 1), ledger: verify.NewLedger(), watched: make(chan struct{})}
	delivery := rig.Config{
		App: app, Functions: []*hostemu.Function{app.Function("ProcessOrder")}, Executable: bin, Settings: handlerSettings(cfg, rep, httpPart{}),
		Messages: stream.Messages,
		Proxy: &faults.ProxyConfig{Seed: 1, SlowMin: 1500 * time.Millisecond, SlowMax: 1500 * time.Millisecond,
			Pick: w.pick, Observe: w.ledger.Observe},
		HandlerOutput: &output,
		Log: func(s string) {
			mu.Lock()
			hostLog = append(hostLog, time.Now().Format("15:04:05.000 ")+s)
			mu.Unlock()
		},
		Watch: func(l *rig.Live) func() {
			w.proxy.Store(l.Proxy)
			go w.run(runCtx, stopRun, l)
			return func() {}
		},
	}
	res, err := rig.Deliver(runCtx, delivery)
	stopRun(nil)
	<-w.watched
	closedAt, ledger := w.closedAt, w.ledger
	if closedAt.IsZero() {
		t.Fatalf("the 403 window never opened behind the restarted handler's first request (run: %v)", err)
	}
	first := firstCreatedSince(ledger, closedAt)
	if err != nil || first < 0 || first > verify.DefaultRecoveryBound {
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("restart at the start of a 403 window (ended %s): run %v (%v); first order created %s after the window ended, want within %s\nhost:\n%s\nhandler (last lines):\n%s",
			closedAt.Format("15:04:05.000"), err, context.Cause(runCtx), first, verify.DefaultRecoveryBound, strings.Join(hostLog, "\n"), tail(output.String(), 5))
	}
	if res.Worker.Kills != 1 || res.Worker.TimeoutRestarts != 0 {
		t.Errorf("worker %+v, want the one kill and no restart after functionTimeout", res.Worker)
	}
	t.Logf("first order created %s after the 403 window ended; run %s", first.Round(time.Millisecond), res.Elapsed.Round(time.Millisecond))
}

// stallWindow kills the handler a quarter into the run and opens a 403
// window behind the restarted process's first document request.
type stallWindow struct {
	proxy    atomic.Pointer[faults.Proxy]
	armed    atomic.Bool
	opened   chan time.Time
	ledger   *verify.Ledger
	closedAt time.Time // when the window closed; read after watched is closed
	watched  chan struct{}
}

// stallLength is how long the 403 window stays open.
const stallLength = 3 * time.Second

// pick answers the restarted process's first document request late, and
// opens the window behind it.
func (w *stallWindow) pick(int, string, string, []byte) faults.Fault {
	if !w.armed.CompareAndSwap(true, false) {
		return -1
	}
	w.proxy.Load().SetOutage(faults.Forbidden)
	w.opened <- time.Now()
	return faults.Slow
}

// run kills the handler, arms pick, closes the window after stallLength and
// ends the run if no order is created within a minute of its end.
func (w *stallWindow) run(runCtx context.Context, stopRun context.CancelCauseFunc, l *rig.Live) {
	defer close(w.watched)
	if !faults.WaitFor(runCtx, func() bool { q := l.Queue.Counts(); return 4*(q.Completed+q.DeadLettered) >= q.Sent }) {
		return
	}
	if err := l.Worker.Kill(); err != nil {
		stopRun(fmt.Errorf("kill: %w", err))
		return
	}
	if _, err := l.Worker.Endpoint(runCtx); err != nil {
		return
	}
	w.armed.Store(true)
	var start time.Time
	select {
	case start = <-w.opened:
	case <-runCtx.Done():
		return
	}
	time.Sleep(stallLength - time.Since(start))
	l.Proxy.SetOutage(0)
	w.closedAt = time.Now()
	// No order created within a minute of the window's end is the stall:
	// the run is ended rather than waited out.
	wait, cancel := context.WithTimeout(runCtx, time.Minute)
	defer cancel()
	if !faults.WaitFor(wait, func() bool { return firstCreatedSince(w.ledger, w.closedAt) >= 0 }) && runCtx.Err() == nil {
		stopRun(errors.New("no order created within a minute of the 403 window's end"))
	}
}

// firstCreatedSince is how long after t the first order was created; -1
// when none was.
func firstCreatedSince(l *verify.Ledger, t time.Time) time.Duration {
	first := time.Duration(-1)
	for _, at := range l.CreatedAt() {
		if d := at.Sub(t); d >= 0 && (first < 0 || d < first) {
			first = d
		}
	}
	return first
}

// tail is the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
