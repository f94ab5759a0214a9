// Package localrun runs the order consumer end to end on one machine: the
// real handler under the host emulator, fed a stream of order messages with
// the faults of at-least-once delivery, against Cosmos DB (usually the local
// emulator), and then checks the outcome that matters: one stored order per
// valid orderId, every other content parked.
package localrun

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/ordersink/orders-consumer/testbed/chaos"
	"github.com/ordersink/orders-consumer/testbed/faults"
	"github.com/ordersink/orders-consumer/testbed/hostemu"
	"github.com/ordersink/orders-consumer/testbed/orderstream"
	"github.com/ordersink/orders-consumer/testbed/rig"
	"github.com/ordersink/orders-consumer/testbed/verify"
)

// Options configure a run.
type Options struct {
	AppRoot    string
	Executable string // overrides host.json defaultExecutablePath
	// Functions feed the queue; empty means every enabled Service Bus
	// function (AzureWebJobs.<name>.Disabled is honoured).
	Functions []string
	// Environ is the environment; LocalSettings a local.settings.json whose
	// Values fill in what the environment lacks ("" for none); Settings
	// (KEY=VALUE) win over both.
	Environ       []string
	LocalSettings string
	Settings      []string

	Messages []*hostemu.Message
	Injected *orderstream.Injected // what a generated stream holds; nil for a file
	Seed     uint64
	// Submissions are orders posted to SubmitOrder while the stream runs
	// (they need HTTPAddr); SubmitInjected what they hold.
	Submissions    []orderstream.Submission
	SubmitInjected *orderstream.SubmitInjected

	Database     string // "" = a fresh database, deleted afterwards
	KeepDatabase bool
	// Resume continues an earlier run kept with KeepDatabase: Database may
	// hold its documents, the check reads back only the orderIds of this
	// run's messages, and the files in OutDir are appended to, not replaced,
	// so they stay the local queues (ordersctl parked resubmit, then a run
	// of its stream file).
	Resume bool

	MaxConcurrentCalls  int // 0 = host.json
	MaxMessageBatchSize int // 0 = host.json
	BatchesInFlight     int
	MaxDeliveryCount    int // 0 = hostemu.DefaultMaxDeliveryCount
	// DuplicateDetection is the queue's duplicate detection window (0 =
	// off). The orders queue in Azure has one (bicep: PT10M): resends with
	// the same MessageId inside it never reach the consumer.
	DuplicateDetection time.Duration
	HandlerKills       int // chaos: SIGKILL the handler this many times
	// Instances is how many instances of the app run side by side (0: one);
	// Lag, when set, puts the fault proxy in front of Cosmos emulating
	// Session consistency across them (faults.ProxyConfig.Lag).
	Instances int
	Lag       time.Duration
	// Clocks are the lock, renewal and function timeout the host enforces
	// (zero fields: host.json and the orders queue).
	Clocks hostemu.Clocks
	// Outages are phases in which Cosmos fails every request: the handler
	// then reaches Cosmos through the chaos fault proxy (no other faults),
	// which needs a loopback http:// endpoint such as the local emulator.
	Outages []faults.Outage
	OutDir  string
	Timeout time.Duration

	// HTTPAddr is where the host's HTTP listener serves the app's
	// httpTrigger functions while the run lasts ("" : no listener);
	// FunctionKeys (name -> value), when set, are required from their
	// callers; a run with HTTP traffic adds chaos.ClientKeys, the keys of
	// its two clients.
	HTTPAddr     string
	FunctionKeys map[string]string
	// HTTPOptional: a listener that cannot open is logged and left out
	// (make run's default port may be taken); Serve needs it.
	HTTPOptional bool
	// HoldKeyCompletions (Serve only), when positive, holds each
	// completion of an idempotency key record until another request has
	// read the record, for at most this long (completionHold): a second
	// request with a key meets the first in flight (make http-demo). It
	// must stay below SUBMIT_DEADLINE.
	HoldKeyCompletions time.Duration

	// Watch, when set, is given the run once delivery starts, as
	// rig.Config.Watch (a test ends an outage on what the queue saw); the
	// func it returns is called when delivery ends.
	Watch func(*rig.Live) (stop func())
	// HistoryFile receives the visualisation of the operations the history
	// check finds not linearizable (HTML; "" for none).
	HistoryFile string

	Verbose  bool      // print each invocation's Logs and failures
	Progress io.Writer // progress bar target, nil for none
	Log      io.Writer // host lines and, with Verbose, invocation logs
}

// Run performs the run and returns its report. An error means the run could
// not be completed; a completed run whose check failed returns a report
// with problems and no error.
func Run(ctx context.Context, opts Options) (*chaos.Report, error) {
	withDefaults(&opts)
	ctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	if opts.Resume && opts.Database == "" {
		return nil, errors.New("resume needs the database of the earlier run (-database)")
	}
	ss, err := openSession(ctx, opts, opts.Resume)
	if err != nil {
		return nil, err
	}
	defer ss.close(opts.KeepDatabase)
	app, fns := ss.app, ss.fns

	rep := &chaos.Report{Database: ss.db.name, Seed: opts.Seed, Stream: opts.Injected, Messages: len(opts.Messages),
		KillsRequested: opts.HandlerKills, MaxDelivery: firstPositive(opts.MaxDeliveryCount, hostemu.DefaultMaxDeliveryCount),
		NotRun: notRun(app, ss.settings, fns, opts.HTTPAddr != "")}
	rep.SetFunctions(fns, firstPositive(opts.MaxConcurrentCalls, app.Host.MaxConcurrentCalls),
		firstPositive(opts.MaxMessageBatchSize, app.Host.MaxMessageBatchSize))
	w := &watched{outcomes: verify.NewOutcomeLog(ss.handlerLog), tracker: verify.NewTracker(opts.Messages)}
	submits := chaos.NewSubmitLedger(chaos.MeetOutages(opts.Submissions, opts.Outages))
	traffic, err := submitTraffic(app, opts, submits)
	if err != nil {
		return nil, err
	}
	res, err := ss.deliver(ctx, runConfig(opts, ss, w, traffic))
	if err != nil {
		return nil, err
	}
	rep.Clocks, rep.Took, rep.Worker, rep.Queue, rep.Proxy, rep.Outages = res.Clocks, res.Elapsed, res.Worker, res.Queue, res.Proxy, res.Outages
	rep.Publisher, rep.Outcomes = res.Publisher, w.outcomes.Outcomes()
	rep.Instances, rep.Kills = max(opts.Instances, 1), res.Kills
	if err := verifyRun(ctx, opts, rep, ss, w, res, submits); err != nil {
		return nil, err
	}
	if err := ss.files.close(); err != nil {
		return nil, err
	}
	rep.Files = append(ss.files.written(), ss.files.path("handler.log"))
	return rep, nil
}

// withDefaults fills what opts leaves at zero (the log, the timeout) and,
// with submissions, puts their fall-backs on the queue and gives the two
// clients their function keys.
func withDefaults(opts *Options) {
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 5 * time.Minute
	}
	if len(opts.Submissions) > 0 {
		opts.Messages = orderstream.WithFallbacks(opts.Messages, opts.Submissions)
		// Two clients, two key names: each its own scope (races).
		keys := maps.Clone(opts.FunctionKeys)
		if keys == nil {
			keys = map[string]string{}
		}
		maps.Copy(keys, chaos.ClientKeys)
		opts.FunctionKeys = keys
	}
}

// watched is what a run observes while it delivers: the handler's
// outcomes, each message's fate and every invocation.
type watched struct {
	outcomes *verify.OutcomeLog
	tracker  *verify.Tracker
	mu       sync.Mutex
	invs     []*hostemu.Invocation
}

func (w *watched) add(inv *hostemu.Invocation) {
	w.mu.Lock()
	w.invs = append(w.invs, inv)
	w.mu.Unlock()
}

// runConfig is the rig's configuration of a local run: the session's, with
// the stream's kills, instances and replica lag, the HTTP traffic, the watch
// and the outbox publisher with no faults of its own (make chaos has them)
// but a poison document in the partition of the stream's latest order, to
// show it is set aside without holding up what follows it. A resumed run
// writes none: its stream is an earlier run's.
func runConfig(opts Options, ss *session, w *watched, traffic func(context.Context, string, func() float64, func() bool) error) rig.Config {
	rc := ss.rigConfig(opts, w.outcomes, func(inv *hostemu.Invocation) {
		w.add(inv)
		if opts.Verbose {
			ss.logInvocation(inv)
		}
	})
	rc.Traffic, rc.Enqueued = traffic, w.tracker.Enqueued
	rc.Kills, rc.Instances = opts.HandlerKills, opts.Instances
	rc.PublisherSeed = opts.Seed
	rc.Watch = func(l *rig.Live) func() {
		stopProgress, stopWatch := showProgress(opts.Progress, l.Queue), func() {}
		if opts.Watch != nil {
			stopWatch = opts.Watch(l)
		}
		return func() { stopWatch(); stopProgress() }
	}
	if opts.Lag > 0 {
		rc.Proxy = &faults.ProxyConfig{Lag: opts.Lag, Seed: opts.Seed}
	}
	if !opts.Resume {
		rc.PoisonPartition = rig.LateOrder(opts.Messages)
	}
	return rc
}

// submitTraffic is the HTTP clients of opts.Submissions, or nil without
// any.
func submitTraffic(app *hostemu.App, opts Options, ledger *chaos.SubmitLedger) (func(context.Context, string, func() float64, func() bool) error, error) {
	if len(opts.Submissions) == 0 {
		return nil, nil
	}
	if opts.HTTPAddr == "" {
		return nil, errors.New("HTTP submissions need the HTTP listener (-http-addr)")
	}
	if app.Function("SubmitOrder") == nil {
		return nil, fmt.Errorf("HTTP submissions go to SubmitOrder, which %s does not have (-http-orders 0 for none)", app.Root)
	}
	return ledger.Traffic(chaos.ClientKeys), nil
}

func firstPositive(vals ...int) int {
	for _, v := range vals {
		if v > 0 {
			return v
		}
	}
	return 0
}

// showProgress draws a bar of settled messages until the returned func is
// called. w nil draws nothing.
func showProgress(w io.Writer, q *hostemu.Queue) func() {
	if w == nil {
		return func() {}
	}
	total := q.Counts().Sent
	bar := progressbar.NewOptions(total, progressbar.OptionSetWriter(w), progressbar.OptionSetDescription("delivering"),
		progressbar.OptionShowCount(), progressbar.OptionShowIts(), progressbar.OptionSetItsString("msg"),
		progressbar.OptionSetWidth(30), progressbar.OptionThrottle(100*time.Millisecond), progressbar.OptionClearOnFinish())
	done := make(chan struct{})
	var drawing sync.WaitGroup
	drawing.Go(func() {
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			c := q.Counts()
			_ = bar.Set(c.Completed + c.DeadLettered)
			select {
			case <-done:
				_ = bar.Finish()
				return
			case <-tick.C:
			}
		}
	})
	return func() { close(done); drawing.Wait() }
}

func printInvocation(w io.Writer, inv *hostemu.Invocation) {
	ids := make([]string, len(inv.Deliveries))
	for i, d := range inv.Deliveries {
		ids[i] = fmt.Sprintf("%s#%d", d.Message.MessageID, d.DeliveryCount)
	}
	who := strings.Join(ids, " ")
	if len(ids) > 3 {
		who = fmt.Sprintf("%d messages", len(ids))
	}
	if !inv.OK() {
		fmt.Fprintf(w, "[Error] %s %s: %s -> %s\n", inv.Function, who, inv.Failure, inv.Settlements[0])
		return
	}
	for _, l := range inv.Logs {
		fmt.Fprintf(w, "[Information] %s\n", l)
	}
	for _, k := range inv.IgnoredOutputs {
		fmt.Fprintf(w, "[Warning] %s %s: Outputs.%s names no output binding; the host ignores it\n", inv.Function, who, k)
	}
	for _, o := range inv.Outputs {
		if o.Base64Trap {
			fmt.Fprintf(w, "[Warning] %s %s: Outputs.%s was a base64-looking string; the host sent \"System.Byte[]\"\n", inv.Function, who, o.Binding)
		}
	}
}

// tail returns the end of the handler's output, to explain a failed start.
func tail(path string) string {
	b, err := os.ReadFile(path)
	if err != nil || len(b) == 0 {
		return ""
	}
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return "\nlast handler output (" + path + "):\n" + string(b)
}
