package chaos

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/ordersink/orders-consumer/cosmos"
	"github.com/ordersink/orders-consumer/cosmos/cosmostest"
	"github.com/ordersink/orders-consumer/orders"
	"github.com/ordersink/orders-consumer/testbed/faults"
	"github.com/ordersink/orders-consumer/testbed/hostemu"
	"github.com/ordersink/orders-consumer/testbed/orderstream"
	"github.com/ordersink/orders-consumer/testbed/rig"
	"github.com/ordersink/orders-consumer/testbed/verify"
)

// Config is one chaos run.
type Config struct {
	// Endpoint and Key reach the Cosmos emulator: a loopback http://
	// endpoint, the proxy's upstream. Checks read it directly.
	Endpoint, Key string
	// Atomic says the endpoint's transactional batches are atomic (real
	// Cosmos DB); then an order without its outbox event is a violation.
	Atomic bool
	// AppRoot is the function app root (host.json, ProcessOrder/).
	AppRoot string
	// HandlerPath overrides host.json's defaultExecutablePath.
	HandlerPath string
	// Messages is the least number of messages delivered.
	Messages int
	// Kills is how many times a handler gets SIGKILL, spread over the run.
	Kills int
	// Instances run side by side; with more than one the run starts with
	// one, scales out to Instances and back (rig.Fleet). Lag is how late a
	// write may reach the replica that serves another instance's point
	// read (faults.ProxyConfig.Lag).
	Instances int
	Lag       time.Duration
	Rates     faults.Rates
	// RetryAfter, SlowMin and SlowMax tune the proxy (ProxyConfig).
	RetryAfter, SlowMin, SlowMax time.Duration
	// OperationTimeout is the handler's COSMOS_OPERATION_TIMEOUT: slow
	// answers past it make the delivery fail while the write succeeded.
	OperationTimeout time.Duration
	// Clocks are the lock, renewal and function timeout the host enforces
	// (zero fields: host.json and the orders queue).
	Clocks hostemu.Clocks
	// Outages are the phases in which Cosmos fails every request, in
	// order (DefaultOutages in make chaos); RecoveryBound is how soon after
	// each orders must be created again (0: DefaultRecoveryBound).
	Outages       []faults.Outage
	RecoveryBound time.Duration
	Seed          uint64
	// Keep leaves the run's database in place for inspection.
	Keep bool
	// Submissions, when its Orders is set, are posted to SubmitOrder beside
	// the queue stream: make run's submissions and clients
	// (orderstream.GenerateSubmissions, submit), under the proxy's faults
	// and the kills like the queue, plus faults aimed at the completions of
	// their key records (KeyFaults).
	Submissions orderstream.SubmitOptions
	// KeyKills and KeyLostAnswers are how many key completions get a kill
	// of the handler or a lost answer (KeyFaults).
	KeyKills, KeyLostAnswers int
	// KeyLease and SubmitDeadline are the handler's IDEMPOTENCY_LEASE and
	// SUBMIT_DEADLINE: short, so that a key left `started` by a kill is
	// taken over within the run (the handler checks them at start).
	KeyLease, SubmitDeadline time.Duration
	// The outbox publisher runs with PublisherKills kills and
	// PublisherSendFaults refused topic sends, writing the topic's messages
	// to TopicFile when set (rig.Config; its seed and poison partition are
	// the run's).
	PublisherKills, PublisherSendFaults int
	TopicFile                           string
	// HistoryFile receives the visualisation of the operations the history
	// check finds not linearizable (HTML; "" for none).
	HistoryFile string
	// Log receives progress lines; HandlerOutput the handler's own output.
	Log, HandlerOutput io.Writer
	// Progress is the period of progress lines (0: none).
	Progress time.Duration
}

// DefaultConfig is `make chaos`'s HTTP and publisher parts; the command's
// flags set the rest.
func DefaultConfig() Config {
	return Config{Instances: 3, Lag: DefaultLag, Submissions: orderstream.DefaultSubmitOptions(), KeyKills: 3, KeyLostAnswers: 3,
		KeyLease: 10 * time.Second, SubmitDeadline: 4 * time.Second,
		PublisherKills: 2, PublisherSendFaults: 2,
		OperationTimeout: DefaultOperationTimeout, RecoveryBound: verify.DefaultRecoveryBound}
}

// DefaultOperationTimeout is the handler's COSMOS_OPERATION_TIMEOUT in a
// chaos run: short, so that an outage's requests give up within it.
const DefaultOperationTimeout = 3 * time.Second

// DefaultLag is make chaos's replica lag: far above Azure's usual
// milliseconds, so that reads on another instance right after a write meet
// it often.
const DefaultLag = 400 * time.Millisecond

// DefaultRates are the fault rates of `make chaos`: about one document
// request in seven gets a fault.
var DefaultRates = faults.Rates{faults.Throttle: 0.05, faults.Unavailable: 0.02, faults.Timeout: 0.02, faults.Slow: 0.02, faults.Drop: 0.02, faults.LostAnswer: 0.03}

// Run performs one chaos run: a fresh database, the fault proxy in front of
// the emulator, the handler under the host emulator with kills, the stream
// delivered until every message is settled, then the checks.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	// The host, the worker and the progress ticker all log; a
	// log.Logger serialises them.
	lg := log.New(cfg.Log, "", 0)
	logf := func(format string, args ...any) { lg.Printf("chaos: "+format, args...) }
	withDefaults(&cfg)
	rep := &Report{Seed: cfg.Seed, Rates: cfg.Rates, KillsRequested: cfg.Kills, MaxDelivery: hostemu.DefaultMaxDeliveryCount}
	app, err := hostemu.LoadApp(cfg.AppRoot)
	if err != nil {
		return nil, err
	}
	fn := app.Function("ProcessOrder")
	if fn == nil {
		return nil, fmt.Errorf("%s: no ProcessOrder function", app.Root)
	}
	rep.SetFunctions([]*hostemu.Function{fn}, app.Host.MaxConcurrentCalls, app.Host.MaxMessageBatchSize)

	h, err := newHTTPPart(cfg, app)
	if err != nil {
		return nil, err
	}
	stream, err := generate(cfg.Messages, cfg.Seed)
	if err != nil {
		return nil, err
	}
	if h.submits != nil {
		stream.Messages = orderstream.WithFallbacks(stream.Messages, h.submits.subs)
	}
	rep.Stream, rep.Messages = &stream.Injected, len(stream.Messages)
	rep.Orders = orderstream.DistinctOrders(stream.Messages)

	db, drop, err := prepareDatabase(ctx, cfg, rep, h.submits != nil)
	if err != nil {
		return nil, err
	}
	defer drop()
	exe, err := app.Executable(cfg.HandlerPath)
	if err != nil {
		return nil, err
	}
	w := &watched{outcomes: verify.NewOutcomeLog(cfg.HandlerOutput), tracker: verify.NewTracker(stream.Messages)}
	logf("seed %d, %d messages (%d orders), database %s, proxy -> %s, %d kills, faults %s; %s",
		cfg.Seed, rep.Messages, rep.Orders, rep.Database, cfg.Endpoint, cfg.Kills, cfg.Rates, cfg.Clocks.Resolve(app.Host))
	delivery := deliveryConfig(cfg, app, fn, exe, handlerSettings(cfg, rep, h), stream.Messages, w, lg)
	delivery.Watch = func(l *rig.Live) func() {
		return progress(cfg.Progress, func() {
			q, p := l.Queue.Counts(), l.Proxy.Counts()
			logf("%5.1fs settled %d/%d (lost completions %d, dead-lettered %d), faults %d, outage answers %d, kills %d",
				time.Since(l.Start).Seconds(), q.Completed+q.DeadLettered, q.Sent, q.LostCompletions, q.DeadLettered,
				p.TotalFaults(), p.OutageAnswers, l.Fleet.Stats().Kills)
		})
	}
	h.rig(&delivery, w.tracker)
	res, runErr := rig.Deliver(ctx, delivery)
	if res == nil {
		return nil, runErr
	}
	rep.Took, rep.Clocks, rep.Queue, rep.Proxy, rep.Worker, rep.Outages = res.Elapsed, res.Clocks, res.Queue, res.Proxy, res.Worker, res.Outages
	rep.Instances, rep.Scaled, rep.Kills = max(cfg.Instances, 1), cfg.Instances > 1, res.Kills
	rep.Outcomes = w.outcomes.Outcomes()
	rep.UnseenCreates = map[faults.Fault]int{faults.LostAnswer: res.Ledger.Unseen(faults.LostAnswer), faults.Slow: res.Ledger.Unseen(faults.Slow)}
	rep.Summary = w.tracker.Summary()
	rep.HTTP = h.report(w.outcomes)
	rep.Publisher = res.Publisher
	if err := verifyRun(ctx, cfg, rep, db, h, res, stream.Messages, w, ParkingQueue(fn)); err != nil {
		return rep, errors.Join(runErr, err)
	}
	return rep, runErr
}

// withDefaults fills the settings cfg leaves at zero: a random seed, the
// operation timeout and the recovery bound.
func withDefaults(cfg *Config) {
	if cfg.Seed == 0 {
		var b [8]byte
		_, _ = rand.Read(b[:])
		cfg.Seed = binary.LittleEndian.Uint64(b[:])%1_000_000 + 1
	}
	if cfg.OperationTimeout <= 0 {
		cfg.OperationTimeout = DefaultOperationTimeout
	}
	if cfg.RecoveryBound <= 0 {
		cfg.RecoveryBound = verify.DefaultRecoveryBound
	}
}

// runContainer is the orders container of a chaos run's database.
const runContainer = "orders"

// prepareDatabase creates the run's fresh database and its containers (the
// key container too with keys: the HTTP API is part of the run); drop
// deletes it unless cfg.Keep.
func prepareDatabase(ctx context.Context, cfg Config, rep *Report, keys bool) (db *cosmostest.Database, drop func(), err error) {
	var suffix [4]byte
	_, _ = rand.Read(suffix[:])
	rep.Database = "chaos-" + hex.EncodeToString(suffix[:])
	store, err := cosmos.Open(cosmos.Options{Endpoint: cfg.Endpoint, Key: cfg.Key}, rep.Database, runContainer)
	if err != nil {
		return nil, nil, err
	}
	db, err = cosmostest.OpenDatabase(cosmos.Options{Endpoint: cfg.Endpoint, Key: cfg.Key}, rep.Database, runContainer)
	if err != nil {
		return nil, nil, err
	}
	setupCtx, cancel := context.WithTimeout(ctx, time.Minute)
	err = store.CreateContainers(setupCtx)
	if err == nil && keys {
		err = store.KeyStore(cosmos.KeyContainer).CreateContainer(setupCtx)
	}
	cancel()
	if err != nil {
		return nil, nil, err
	}
	drop = func() {
		if cfg.Keep {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_ = db.Delete(ctx)
	}
	return db, drop, nil
}

// handlerSettings is the handler's environment in a chaos run.
func handlerSettings(cfg Config, rep *Report, h httpPart) *hostemu.Settings {
	settings := hostemu.NewSettings(os.Environ())
	for k, v := range map[string]string{
		"COSMOS_ENDPOINT": cfg.Endpoint, "COSMOS_KEY": cfg.Key, "COSMOS_DATABASE": rep.Database,
		"COSMOS_CONTAINER": runContainer, "COSMOS_OPERATION_TIMEOUT": cfg.OperationTimeout.String(),
		"RETRY_BUDGET_DELIVERY_COUNT": strconv.Itoa(orders.DefaultRetryBudget), "LOG_LEVEL": "info",
	} {
		settings.Set(k, v)
	}
	h.configure(settings, cfg)
	return settings
}

// watched is what a run observes while it delivers: the handler's
// outcomes, each message's fate and every invocation.
type watched struct {
	outcomes *verify.OutcomeLog
	tracker  *verify.Tracker
	mu       sync.Mutex
	invs     []*hostemu.Invocation
}

func (w *watched) observe(inv *hostemu.Invocation) {
	w.tracker.Observe(inv)
	w.mu.Lock()
	w.invs = append(w.invs, inv)
	w.mu.Unlock()
}

func (w *watched) invocations() []*hostemu.Invocation {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.invs)
}

// deliveryConfig is the rig's configuration of a chaos run: the fault proxy,
// kills, outages and the publisher.
func deliveryConfig(cfg Config, app *hostemu.App, fn *hostemu.Function, exe string, settings *hostemu.Settings,
	msgs []*hostemu.Message, w *watched, lg *log.Logger) rig.Config {
	return rig.Config{
		App: app, Functions: []*hostemu.Function{fn}, Executable: exe, Settings: settings, Messages: msgs,
		Clocks: cfg.Clocks, Kills: cfg.Kills, Instances: cfg.Instances, Scale: cfg.Instances > 1,
		Proxy:   &faults.ProxyConfig{Rates: cfg.Rates, RetryAfter: cfg.RetryAfter, SlowMin: cfg.SlowMin, SlowMax: cfg.SlowMax, Seed: cfg.Seed, Lag: cfg.Lag},
		Outages: cfg.Outages, HandlerOutput: w.outcomes, Observe: w.observe,
		Log:       func(s string) { lg.Print("hostemu: " + s) },
		Publisher: true, PublisherKills: cfg.PublisherKills, PublisherSendFaults: cfg.PublisherSendFaults,
		TopicFile: cfg.TopicFile, PublisherSeed: cfg.Seed, PoisonPartition: rig.LateOrder(msgs),
	}
}

// verifyRun reads the run's database back and checks it against what was
// sent and observed, filling rep.Findings and rep.Contents.
func verifyRun(ctx context.Context, cfg Config, rep *Report, db *cosmostest.Database, h httpPart, res *rig.Result,
	sent []*hostemu.Message, w *watched, parking string) error {
	checkCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
	defer cancel()
	msgs := slices.Concat(sent, w.tracker.Added())
	ran := w.invocations()
	ledger := res.Ledger
	findings, stored, err := CheckRun(checkCtx, db, Evidence{Evidence: verify.Evidence{Messages: msgs, Fates: w.tracker,
		Queue: rep.Queue, Worker: rep.Worker, Dead: res.DeadLetters, Created: ledger.Created(), Atomic: cfg.Atomic,
		Outages: rep.Outages, CreatedAt: ledger.CreatedAt(), RecoveryBound: cfg.RecoveryBound},
		HTTP: h.submits, KeyFaults: h.faults, Publisher: res.Publisher, Invocations: ran, HistoryFile: cfg.HistoryFile})
	if err != nil {
		return err
	}
	rep.Findings = findings
	rep.Contents = Count(msgs, ran, stored, len(res.DeadLetters), parking)
	return nil
}

// generate makes a stream of at least n messages: the orderstream generator
// with more of every delivery fault than a normal day.
func generate(n int, seed uint64) (*orderstream.Stream, error) {
	opts := orderstream.Options{Seed: seed, Duplicates: 0.25, Bursts: 0.10, BurstSize: 5,
		Mismatches: 0.06, Invalid: 0.02, LostCompletions: 0.05}
	// Messages per order: the order, its duplicates, 2.5 burst copies on
	// average per burst, its mismatches and the invalid messages.
	perOrder := 1 + opts.Duplicates + opts.Bursts*2.5 + opts.Mismatches + opts.Invalid
	opts.Orders = max(1, int(float64(n)/perOrder))
	for {
		s, err := orderstream.Generate(opts)
		if err != nil {
			return nil, err
		}
		if len(s.Messages) >= n {
			return s, nil
		}
		opts.Orders += int(float64(n-len(s.Messages))/perOrder) + 1
	}
}

// progress calls f every period until the returned stop is called.
func progress(period time.Duration, f func()) (stop func()) {
	if period <= 0 {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(period)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				f()
			case <-done:
				return
			}
		}
	})
	return func() { close(done); wg.Wait() }
}
