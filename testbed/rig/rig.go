// Package rig delivers a stream to the real handler under the local
// Functions host emulator (testbed/hostemu): the queue, the platform's
// clocks, handler kills, the fault proxy in front of Cosmos DB
// (testbed/faults), the HTTP listener and the outbox publisher; make run
// and make chaos both run on it.
package rig

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/ordersink/orders-consumer/testbed/faults"
	"github.com/ordersink/orders-consumer/testbed/hostemu"
	"github.com/ordersink/orders-consumer/testbed/verify"
)

// Config is one delivery of a stream to the real handler under the host
// emulator: what make run and make chaos share. They differ in their fault
// settings (Proxy, Outages, Kills) and in what they do with the result.
type Config struct {
	App       *hostemu.App
	Functions []*hostemu.Function // all read one queue
	// Executable is the resolved handler; Settings its app settings.
	// With Proxy set, COSMOS_ENDPOINT is replaced by the proxy's URL.
	Executable string
	Settings   *hostemu.Settings
	Messages   []*hostemu.Message

	MaxDeliveryCount    int           // 0 = hostemu.DefaultMaxDeliveryCount
	DuplicateDetection  time.Duration // 0 = off
	MaxConcurrentCalls  int           // 0 = host.json
	MaxMessageBatchSize int           // 0 = host.json
	BatchesInFlight     int
	Clocks              hostemu.Clocks
	// Instances is how many instances of the app run (0: one), each its
	// own handler process and host (Fleet); with Scale the run starts with
	// one and scales out and in (Fleet.steer).
	Instances int
	Scale     bool

	// Kills SIGKILLs a handler this many times, spread over the run, each
	// on the next instance.
	Kills int
	// Proxy puts the fault proxy between the handler and Cosmos (its
	// Upstream is set from COSMOS_ENDPOINT); nil without Outages means
	// no proxy. Outages are the phases in which Cosmos fails every request.
	Proxy   *faults.ProxyConfig
	Outages []faults.Outage

	HandlerOutput io.Writer
	Observe       func(*hostemu.Invocation)
	ServiceBusOut func(*hostemu.Invocation, hostemu.OutputMessage) error
	// HTTPAddr, when set, opens the host's HTTP listener for the app's
	// httpTrigger functions on it once the handler is ready (normally
	// loopback: 127.0.0.1:7071, Core Tools' port); it closes when the
	// delivery ends. FunctionKeys (name -> value), when set, are required
	// from callers of function and admin level functions
	// (hostemu.HTTPOptions.FunctionKeys); ObserveHTTP receives every HTTP
	// invocation. HTTPOptional: when HTTPAddr cannot be opened (the default
	// port taken), the listener opens on a free loopback port instead of
	// failing the run. Listening is called once the listener is open, with
	// its base URL and the routes it serves.
	HTTPAddr     string
	FunctionKeys map[string]string
	ObserveHTTP  func(*hostemu.Invocation)
	HTTPOptional bool
	Listening    func(baseURL string, routes []hostemu.HTTPRoute)
	// Traffic, when set, runs beside the queue delivery once the HTTP
	// listener is open, given its base URL, the share of the queue settled
	// so far and whether a Cosmos outage is on; the queue stays open until
	// it returns (make run's HTTP submissions). It needs HTTPAddr.
	Traffic func(ctx context.Context, baseURL string, settled func() float64, inOutage func() bool) error
	// Enqueued goes to hostemu.Options: a message an output binding put on
	// the queue.
	Enqueued func(*hostemu.Invocation, *hostemu.Message)
	// Serve keeps the queue open until ctx ends instead of ending the
	// delivery once it is drained: messages arrive through the HTTP
	// functions' output bindings (make serve). ctx ending is then no error.
	Serve bool
	// Publisher runs the app's outbox publisher (its cosmosDBTrigger
	// function) beside the queue, reading Cosmos directly, and arms its
	// faults: PublisherKills publisher invocations get the handler killed
	// while their request is in flight; PublisherSendFaults have the topic
	// refuse a send after the handler answered. PoisonPartition, when set,
	// gets an outbox document the publisher can never send as soon as the
	// trigger runs, before the partition's own documents (an orderId the
	// stream creates late), to show the partition's later documents are
	// not held up behind it. TopicFile, when set, receives the topic's
	// messages as JSONL. PublisherSeed feeds the change feed retry
	// back-off's random factor (hostemu.ChangeFeedConfig.Seed).
	Publisher                           bool
	PublisherKills, PublisherSendFaults int
	PoisonPartition, TopicFile          string
	PublisherSeed                       uint64
	// Log receives the host's lines and the rig's (outage phases).
	Log func(string)
	// Watch is called once delivery starts, to follow it; the func it
	// returns is called when delivery ends.
	Watch func(*Live) (stop func())
}

// Live is a run in progress, for progress lines.
type Live struct {
	Queue *hostemu.Queue
	Fleet *Fleet
	// Worker is the first instance's handler.
	Worker *hostemu.Worker
	Proxy  *faults.Proxy // nil without one
	Start  time.Time
}

// Result is what a delivery left, for the checks.
type Result struct {
	Clocks      hostemu.Clocks
	Queue       hostemu.QueueCounts
	DeadLetters []hostemu.DeadLetter
	Dropped     []*hostemu.Message // by duplicate detection
	Worker      hostemu.WorkerStats
	Proxy       faults.ProxyCounts
	Ledger      *verify.Ledger // nil without a proxy
	Outages     []faults.OutageRecord
	Elapsed     time.Duration
	Publisher   *PublisherResult // nil without one
	Kills       []InstanceKill
}

// Deliver runs the handler on cfg.Instances instances, delivers every
// message until each is completed or dead-lettered, and stops the
// handlers. An error means the delivery could not be completed; the result
// is returned with it when there is one.
func Deliver(ctx context.Context, cfg Config) (*Result, error) {
	if cfg.Log == nil {
		cfg.Log = func(string) {}
	}
	for _, o := range cfg.Outages {
		if err := o.Validate(); err != nil {
			return nil, err
		}
	}
	cfg.Instances = max(cfg.Instances, 1)
	res := &Result{Clocks: cfg.Clocks.Resolve(cfg.App.Host)}
	cfg.Clocks.Apply(cfg.Settings)
	// The trigger reads Cosmos itself, not through the handler's proxy.
	endpoint, _ := cfg.Settings.Get("COSMOS_ENDPOINT")
	key, _ := cfg.Settings.Get("COSMOS_KEY")
	pub, err := newPublisher(ctx, &cfg, endpoint, key)
	if err != nil {
		return nil, err
	}
	if pub != nil {
		// A delivery that fails never asks for the result: its topic
		// file is closed here (after the fleet's deferred halt).
		defer func() {
			pub.mu.Lock()
			pub.closeTopic()
			pub.mu.Unlock()
		}()
	}
	proxy, err := startRigProxy(&cfg, res)
	if err != nil {
		return nil, err
	}
	if proxy != nil {
		defer proxy.Close()
	}
	queue := hostemu.NewQueue(cfg.Functions[0].ServiceBusQueue(), cfg.MaxDeliveryCount)
	queue.DuplicateDetection, queue.LockDuration = cfg.DuplicateDetection, res.Clocks.LockDuration
	queue.Send(cfg.Messages...)
	// Held open before any instance receives: by the HTTP traffic until it
	// ends, by a session until ctx does.
	holdForTraffic := func() {}
	if cfg.Traffic != nil {
		holdForTraffic = queue.Hold()
	}
	if cfg.Serve {
		stopHolding := context.AfterFunc(ctx, queue.Hold())
		defer stopHolding()
	}
	fleet := &Fleet{cfg: &cfg, queue: queue, proxy: proxy, pub: pub, ctx: ctx}
	defer fleet.halt()
	base, stopHTTP, err := fleet.open(ctx)
	if err != nil {
		return nil, err
	}
	defer stopHTTP()
	if cfg.Traffic != nil && base == "" {
		return nil, errors.New("HTTP traffic needs the HTTP listener")
	}
	runErr := fleet.drive(ctx, res, base, holdForTraffic, stopHTTP)
	fleet.halt() // flushes the handlers' output and stops the feeds
	res.Publisher = pub.result()
	res.collect(queue, fleet, proxy)
	if runErr != nil {
		return res, fmt.Errorf("host emulator: %w", runErr)
	}
	return res, nil
}

// drive runs the delivery until the instances have delivered the queue,
// with the watch, the HTTP traffic, the outages and the fleet's plan
// beside it, then waits for the traffic and the publisher's catch-up and
// books what they did in res (Deliver books the publisher's figures once
// the fleet has stopped its feeds). It returns why the delivery failed, if
// it did.
func (f *Fleet) drive(ctx context.Context, res *Result, base string, holdForTraffic, stopHTTP func()) error {
	cfg := f.cfg
	settled := func() float64 {
		q := f.queue.Counts()
		return float64(q.Completed+q.DeadLettered) / float64(max(q.Sent, 1))
	}
	// Watch comes before the traffic: it may arm what the clients meet
	// (make chaos's key faults kill the instance they are given).
	live := &Live{Queue: f.queue, Fleet: f, Worker: f.all[0].worker, Proxy: f.proxy, Start: time.Now()}
	stopWatch := func() {}
	if cfg.Watch != nil {
		stopWatch = cfg.Watch(live)
	}
	trafficDone := startTraffic(ctx, cfg, holdForTraffic, base, f.proxy, settled)
	planCtx, endPlan := context.WithCancel(ctx)
	outages := &faults.OutageSchedule{}
	if f.proxy != nil {
		outages = faults.StartOutages(planCtx, cfg.Outages, f.proxy, settled, func(format string, args ...any) { cfg.Log(fmt.Sprintf(format, args...)) })
	}
	steered := make(chan struct{})
	go func() { defer close(steered); f.steer(planCtx, settled) }()
	runErr := f.wait()
	if runErr == nil && ctx.Err() != nil {
		runErr = ctx.Err()
	}
	if cfg.Serve && ctx.Err() != nil && errors.Is(runErr, ctx.Err()) {
		runErr = nil // the session ended as asked
	}
	if err := trafficDone(runErr != nil); err != nil && runErr == nil && !errors.Is(err, context.Canceled) {
		runErr = fmt.Errorf("HTTP traffic: %w", err)
	}
	stopHTTP()
	f.pub.catchUp(ctx)
	endPlan()
	<-steered
	res.Outages = outages.Wait()
	stopWatch()
	res.Elapsed = time.Since(live.Start)
	return runErr
}

// open writes the poison document, starts the first instances (one when
// the fleet scales, else all) and opens the HTTP listener in front of them.
func (f *Fleet) open(ctx context.Context) (base string, stopHTTP func(), err error) {
	if f.pub != nil {
		if err := f.pub.writePoison(ctx); err != nil {
			return "", nil, err
		}
	}
	first := 1
	if !f.cfg.Scale {
		first = f.cfg.Instances
	}
	for n := 1; n <= first; n++ {
		if err := f.start(n); err != nil {
			return "", nil, err
		}
	}
	return listenHTTP(ctx, f.cfg, f)
}

// collect books what the queue, the instances and the proxy did.
func (res *Result) collect(queue *hostemu.Queue, fleet *Fleet, proxy *faults.Proxy) {
	res.Queue, res.DeadLetters, res.Dropped, res.Worker = queue.Counts(), queue.DeadLetters(), queue.Dropped(), fleet.Stats()
	fleet.mu.Lock()
	res.Kills = slices.Clone(fleet.kills)
	fleet.mu.Unlock()
	if proxy != nil {
		_ = proxy.Close()
		res.Proxy = proxy.Counts()
	}
}

// startTraffic runs cfg.Traffic, when set, beside the queue, which stays
// held open until it ends (release); the func it returns waits for it
// (cancelling it first when told the delivery failed) and returns its
// error.
func startTraffic(ctx context.Context, cfg *Config, release func(), base string, proxy *faults.Proxy, settled func() float64) func(cancel bool) error {
	if cfg.Traffic == nil {
		return func(bool) error { return nil }
	}
	inOutage := func() bool { return false }
	if proxy != nil {
		inOutage = proxy.InOutage
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		defer release()
		done <- cfg.Traffic(ctx, base, settled, inOutage)
	}()
	return func(stop bool) error {
		if stop {
			cancel() // the delivery failed: the clients stop too
		}
		defer cancel()
		return <-done
	}
}

// newHost is one instance's host as the platform would set it up: its
// clocks, its concurrency, reading the delivery's queue; the publisher, when
// there is one, sees and faults its output sends.
func (f *Fleet) newHost(worker *hostemu.Worker, observe func(*hostemu.Invocation), log func(string)) (*hostemu.Host, error) {
	cfg := f.cfg
	clocks := cfg.Clocks.Resolve(cfg.App.Host)
	opts := hostemu.Options{
		Functions: cfg.Functions, Queue: f.queue, Handler: worker,
		MaxConcurrentCalls:  firstPositive(cfg.MaxConcurrentCalls, cfg.App.Host.MaxConcurrentCalls),
		MaxMessageBatchSize: firstPositive(cfg.MaxMessageBatchSize, cfg.App.Host.MaxMessageBatchSize),
		BatchesInFlight:     cfg.BatchesInFlight,
		FunctionTimeout:     clocks.FunctionTimeout, Restart: worker.Restart,
		MaxAutoLockRenewalDuration: clocks.MaxAutoLockRenewal,
		// The broker's limit is the one the handler budgets for.
		MaxMessageBytes: cfg.Settings.Int("SERVICEBUS_MAX_MESSAGE_BYTES"),
		Observe:         observe, Log: log, ServiceBusOut: cfg.ServiceBusOut, Enqueued: cfg.Enqueued,
	}
	if f.pub != nil {
		opts.ServiceBusOut, opts.SendFault = f.pub.serviceBusOut, f.pub.sendFault
	}
	return hostemu.New(opts)
}

// listenHTTP opens the HTTP listener in front of the fleet when the run
// asks for one; stop closes it and waits for the callers in flight (it may
// be called more than once).
func listenHTTP(ctx context.Context, cfg *Config, fleet *Fleet) (baseURL string, stop func(), err error) {
	if cfg.HTTPAddr == "" {
		return "", func() {}, nil
	}
	httpCtx, cancel := context.WithCancel(ctx)
	base, wait, err := hostemu.ListenHandler(httpCtx, cfg.HTTPAddr, fleet)
	if err != nil && cfg.HTTPOptional {
		cfg.Log(err.Error() + "; listening on a free port instead")
		base, wait, err = hostemu.ListenHandler(httpCtx, "127.0.0.1:0", fleet)
	}
	if err != nil {
		cancel()
		return "", nil, err
	}
	if cfg.Listening != nil {
		cfg.Listening(base, fleet.routes())
	}
	var once sync.Once
	return base, func() {
		once.Do(func() {
			cancel()
			if err := wait(); err != nil {
				cfg.Log("HTTP listener: " + err.Error())
			}
		})
	}, nil
}

// startRigProxy starts the fault proxy in front of COSMOS_ENDPOINT when the
// run has faults or outages, and points the handler at it.
func startRigProxy(cfg *Config, res *Result) (*faults.Proxy, error) {
	if cfg.Proxy == nil && len(cfg.Outages) == 0 {
		return nil, nil
	}
	pc := faults.ProxyConfig{}
	if cfg.Proxy != nil {
		pc = *cfg.Proxy
	}
	pc.Upstream, _ = cfg.Settings.Get("COSMOS_ENDPOINT")
	res.Ledger = verify.NewLedger()
	observe := pc.Observe
	pc.Observe = func(x faults.Exchange) {
		res.Ledger.Observe(x)
		if observe != nil {
			observe(x)
		}
	}
	p, err := faults.StartProxy(pc)
	if err != nil {
		return nil, fmt.Errorf("faults and outages need the fault proxy in front of Cosmos: %w", err)
	}
	cfg.Settings.Set("COSMOS_ENDPOINT", p.URL())
	return p, nil
}

func firstPositive(vals ...int) int {
	for _, v := range vals {
		if v > 0 {
			return v
		}
	}
	return 0
}
