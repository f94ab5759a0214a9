package hostemu

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Defaults of the Cosmos DB extension's change feed processor options.
const (
	// DefaultFeedPollDelay is how long a range waits after finding no new
	// changes (feedPollDelay, 5 s).
	DefaultFeedPollDelay = 5 * time.Second
	// DefaultMaxItemsPerInvocation is the change feed processor's page size
	// when maxItemsPerInvocation is not set.
	DefaultMaxItemsPerInvocation = 100
	// readTimeout bounds one step of the trigger against Cosmos (a poll, a
	// lease update): a Cosmos that does not answer costs a step, which the
	// loop repeats, instead of stopping the feed for the rest of the run.
	readTimeout = 30 * time.Second
)

// ChangeFeedConfig is what a cosmosDBTrigger needs beyond its function.json:
// the containers (the trigger reads Cosmos DB itself, not through the
// handler's endpoint) and the faults a run aims at it.
type ChangeFeedConfig struct {
	// Monitored is the container the trigger watches; Leases the lease
	// container (partitioned on /id).
	Monitored, Leases *CosmosContainer
	// LeasePrefix is the lease ids' prefix before the range id, ".."
	// included (TriggerContainers gives the extension's).
	LeasePrefix string
	// PollDelay, MaxItems and Retry override function.json's
	// feedPollDelay, maxItemsPerInvocation and retry policy (a test meets a
	// retry in milliseconds instead of seconds); zero keeps them.
	PollDelay time.Duration
	MaxItems  int
	Retry     *RetryPolicy
	// Seed feeds the retry back-off's random factor.
	Seed uint64
	// Ranges is how many feed ranges, each with its lease, the container's
	// documents are read in, by their partition key's hash as physical
	// partitions hold them (0: one). Instances running the trigger share
	// the leases as the change feed processor does (balance), on Clocks
	// (zero: DefaultLeaseClocks).
	Ranges int
	Clocks LeaseClocks
	// KillDuring, when it says yes for the nth invocation (from 1), kills
	// the handler with Kill while that invocation's request is half sent:
	// the invocation fails as one whose handler died mid-batch.
	KillDuring func(n int) bool
	Kill       func() error
	// Observe is called once per finished invocation.
	Observe func(*Invocation)
	Log     func(string)
}

// ChangeFeedStats count what the trigger did.
type ChangeFeedStats struct {
	Leases      int
	Invocations int
	// Batches are the invocations that succeeded, each followed by a
	// checkpoint; Documents the documents they carried.
	Batches, Documents int
	// Failed invocations; Retries the executions that followed one.
	Failed, Retries int
	// Skipped are batches checkpointed past after the retry policy was
	// spent (the extension's behaviour), with their documents.
	Skipped, SkippedDocuments int
	// Kills are the handler kills aimed at an invocation in flight.
	Kills int
	// Acquired are the leases this instance took, TakenOver those of them
	// another instance owned (expired: a dead one's; or stolen to
	// rebalance), Lost those another took from it while it read them.
	Acquired, TakenOver, Lost int
	// Uncheckpointed are the invocations after which their batch was not
	// checkpointed, so it comes again (here or on another instance), with
	// whatever they sent: the only sources of an event sent twice.
	Uncheckpointed []Uncheckpointed
}

// Uncheckpointed is an invocation whose batch was not checkpointed after it, and
// why: "failed" (retried by the policy), "lease lost" (another instance
// took the lease before the checkpoint), "checkpoint failed", or
// "stopped" (the instance stopped during it).
type Uncheckpointed struct {
	Invocation, Why string
}

// ChangeFeed emulates the Cosmos DB trigger of one function (extension 4.x,
// change feed processor, latest-version mode) against an emulator that
// serves no change feed: it polls the monitored container, hands each
// range's changes in order, at most maxItemsPerInvocation at a time, to the
// function in the host's envelope, retries a failed batch as the function's
// retry policy says, and checkpoints the range's lease after each batch
// that succeeded or whose retries were spent.
type ChangeFeed struct {
	h         *Host
	fn        *Function
	cfg       ChangeFeedConfig
	maxItems  int
	pollDelay time.Duration
	fromStart bool
	retry     *RetryPolicy
	store     *leaseStore
	owner     string
	clocks    LeaseClocks
	pkField   string // the partition key's property, when Ranges > 1

	mu       sync.Mutex
	stats    ChangeFeedStats
	caughtUp map[string]time.Time // range -> start of its last poll that found nothing new
	draining atomic.Bool
	crashed  atomic.Bool     // Run ends without releasing its leases
	retiring context.Context // done once Retire was called: no new batch starts
	retire   context.CancelFunc
}

// ChangeFeed returns the trigger of fn, a cosmosDBTrigger function, run by
// this host (its handler, clocks, output bindings and send faults).
func (h *Host) ChangeFeed(fn *Function, cfg ChangeFeedConfig) (*ChangeFeed, error) {
	t := fn.Trigger()
	if t == nil || !strings.EqualFold(t.Type, "cosmosDBTrigger") {
		return nil, fmt.Errorf("hostemu: function %s has no cosmosDBTrigger", fn.Name)
	}
	if cfg.Monitored == nil || cfg.Leases == nil {
		return nil, errors.New("hostemu: a change feed needs the monitored and the lease container")
	}
	if cfg.Log == nil {
		cfg.Log = func(string) {}
	}
	// function.json's settings, overridden by cfg's; zero or less keeps the
	// extension's defaults.
	items, _ := t.Raw["maxItemsPerInvocation"].(float64)
	pollMS, _ := t.Raw["feedPollDelay"].(float64)
	pollDelay := time.Duration(pollMS) * time.Millisecond
	cf := &ChangeFeed{h: h, fn: fn, cfg: cfg, owner: newGUID(), caughtUp: map[string]time.Time{},
		maxItems:  cmp.Or(max(cfg.MaxItems, 0), max(int(items), 0), DefaultMaxItemsPerInvocation),
		pollDelay: cmp.Or(max(cfg.PollDelay, 0), max(pollDelay, 0), DefaultFeedPollDelay),
		clocks:    cmp.Or(cfg.Clocks, DefaultLeaseClocks)}
	cf.cfg.Ranges = max(cf.cfg.Ranges, 1)
	cf.retiring, cf.retire = context.WithCancel(context.Background())
	cf.fromStart, _ = t.Raw["startFromBeginning"].(bool)
	cf.retry = cfg.Retry
	if cf.retry == nil {
		var err error
		if cf.retry, err = LoadRetryPolicy(fn); err != nil {
			return nil, err
		}
	}
	cf.store = &leaseStore{c: cfg.Leases.c, prefix: cfg.LeasePrefix, owner: cf.owner}
	return cf, nil
}

// Stats returns the counts so far.
func (cf *ChangeFeed) Stats() ChangeFeedStats {
	cf.mu.Lock()
	defer cf.mu.Unlock()
	st := cf.stats
	st.Uncheckpointed = slices.Clone(st.Uncheckpointed)
	return st
}

// Policy is the retry policy in force (nil: none, a failed batch is
// checkpointed past at once).
func (cf *ChangeFeed) Policy() *RetryPolicy { return cf.retry }

// Run reads the feed until ctx ends or Retire is called: it creates the
// ranges' leases that are missing, then takes and reads its share of them
// (balance), and releases them at the end, unless Crash was called. It returns an error only
// when the trigger cannot start (no container, a lease that cannot be
// created).
func (cf *ChangeFeed) Run(ctx context.Context) error {
	start := FeedPosition{}
	if !cf.fromStart {
		start.TS = time.Now().Unix()
	}
	stepCtx, cancel := context.WithTimeout(ctx, readTimeout)
	defer cancel()
	if cf.cfg.Ranges > 1 {
		props, err := cf.cfg.Monitored.c.Read(stepCtx, nil)
		if err != nil {
			return fmt.Errorf("%s: read container %s: %w", cf.fn.Name, cf.cfg.Monitored.ID(), err)
		}
		cf.pkField = strings.TrimPrefix(props.ContainerProperties.PartitionKeyDefinition.Paths[0], "/")
	}
	for r := range cf.cfg.Ranges {
		if err := cf.store.ensure(stepCtx, strconv.Itoa(r), start); err != nil {
			return fmt.Errorf("%s: %w", cf.fn.Name, err)
		}
	}
	cf.mu.Lock()
	cf.stats.Leases = cf.cfg.Ranges
	cf.mu.Unlock()
	cf.cfg.Log(fmt.Sprintf("%s: change feed of %s, %d leases (%s…), %d items per invocation, poll delay %s, retry %s",
		cf.fn.Name, cf.cfg.Monitored.ID(), cf.cfg.Ranges, cf.store.prefix, cf.maxItems, cf.pollDelay, cf.retry))
	cf.balance(ctx, cf.readRange)
	if !cf.crashed.Load() {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), readTimeout)
		defer cancel()
		cf.release(rctx)
	}
	return nil
}

// Retire makes Run end as the host ends the trigger of an instance scaled
// in (Azure's DrainMode: CosmosDBTriggerListener.StopAsync, extension 4.4
// and later, does not cancel the function then): each range finishes its
// batch in flight and checkpoints it, no new batch starts, and Run gives
// the leases back and returns. A batch waiting between two executions of
// its retry policy is not executed again and not checkpointed (its failed
// execution is booked "failed"). Host.StopReceiving is the same step for
// the instance's queue trigger.
func (cf *ChangeFeed) Retire() { cf.retire() }

// retired reports whether Retire was called.
func (cf *ChangeFeed) retired() bool { return cf.retiring.Err() != nil }

// Crash makes Run end, when its context ends, without releasing its
// leases: an instance that died, whose leases others take once they expire.
func (cf *ChangeFeed) Crash() { cf.crashed.Store(true) }

// readRange is one lease's loop: poll, deliver, checkpoint.
func (cf *ChangeFeed) readRange(ctx context.Context, lease *Lease) {
	rnd := rand.New(rand.NewPCG(cf.cfg.Seed, uint64(len(lease.ID))))
	for ctx.Err() == nil && !cf.retired() {
		pos, err := lease.Position()
		if err != nil {
			cf.cfg.Log(err.Error())
			return
		}
		began := time.Now()
		stepCtx, cancel := context.WithTimeout(ctx, readTimeout)
		batch, err := cf.poll(stepCtx, pos, lease.LeaseToken)
		cancel()
		if err != nil {
			// The processor logs the error and reads again after the delay.
			cf.cfg.Log(fmt.Sprintf("%s: read the change feed: %v", cf.fn.Name, err))
			cf.sleep(ctx)
			continue
		}
		if len(batch) == 0 {
			cf.noteCaughtUp(lease.LeaseToken, began)
			cf.sleep(ctx)
			continue
		}
		last, done := cf.deliver(ctx, batch, rnd)
		if !done {
			return // the run ended or the instance retired before the batch was done: no checkpoint
		}
		stepCtx, cancel = context.WithTimeout(ctx, readTimeout)
		past := pos.after(batch)
		next, err := cf.store.checkpoint(stepCtx, lease, past)
		cancel()
		if errors.Is(err, errLeaseLost) {
			// Another instance took the lease: it reads on from the last
			// checkpoint, so this batch comes again there.
			cf.cfg.Log(fmt.Sprintf("%s: checkpoint: %v", cf.fn.Name, err))
			cf.mu.Lock()
			cf.stats.Lost++
			cf.mu.Unlock()
			cf.uncheckpointed(last, "lease lost")
			return
		}
		if err != nil {
			// The processor drops the lease and takes it up again from the
			// checkpoint it holds: the batch comes again, unless the
			// checkpoint was written and only its answer lost.
			cf.cfg.Log(fmt.Sprintf("%s: checkpoint: %v", cf.fn.Name, err))
			stepCtx, cancel = context.WithTimeout(ctx, readTimeout)
			next, err = cf.store.read(stepCtx, lease.ID)
			cancel()
			if err != nil {
				cf.uncheckpointed(last, "checkpoint failed")
				cf.cfg.Log(fmt.Sprintf("%s: %v", cf.fn.Name, err))
				cf.sleep(ctx)
				continue
			}
			if at, perr := next.Position(); perr != nil || at.TS != past.TS || !slices.Equal(at.Seen, past.Seen) {
				cf.uncheckpointed(last, "checkpoint failed")
			}
		}
		lease = next
	}
}

// uncheckpointed books an invocation whose batch is not checkpointed after it.
func (cf *ChangeFeed) uncheckpointed(inv *Invocation, why string) {
	cf.mu.Lock()
	defer cf.mu.Unlock()
	cf.stats.Uncheckpointed = append(cf.stats.Uncheckpointed, Uncheckpointed{Invocation: inv.ID, Why: why})
}

// deliver invokes the function with batch until it succeeds or the retry
// policy is spent, and returns the last invocation; false when ctx ended
// or Retire came first (nothing to checkpoint).
func (cf *ChangeFeed) deliver(ctx context.Context, batch []change, rnd *rand.Rand) (*Invocation, bool) {
	var delays *retryDelays
	if cf.retry != nil {
		delays = cf.retry.delays(rnd)
	}
	for failed := 0; ; failed++ {
		inv := cf.invoke(ctx, batch)
		if ctx.Err() != nil {
			cf.uncheckpointed(inv, "stopped")
			return inv, false
		}
		cf.mu.Lock()
		if inv.OK() {
			cf.stats.Batches++
			cf.stats.Documents += len(batch)
			cf.mu.Unlock()
			return inv, true
		}
		cf.stats.Failed++
		if cf.retry == nil || cf.retry.Spent(failed) {
			// ProcessChangesAsync returns normally after a failed result,
			// so the processor checkpoints past the batch.
			cf.stats.Skipped++
			cf.stats.SkippedDocuments += len(batch)
			cf.mu.Unlock()
			cf.cfg.Log(fmt.Sprintf("%s: invocation %s failed after %d executions, the batch of %d documents is checkpointed past: %s",
				cf.fn.Name, inv.ID, failed+1, len(batch), inv.Failure))
			return inv, true
		}
		cf.stats.Retries++
		cf.mu.Unlock()
		cf.uncheckpointed(inv, "failed")
		delay := delays.next()
		cf.cfg.Log(fmt.Sprintf("%s: invocation %s failed (%s); execution %d in %s", cf.fn.Name, inv.ID, inv.Failure, failed+2, delay.Round(time.Millisecond)))
		if !waitOr(ctx, cf.retiring.Done(), delay) {
			return inv, false
		}
	}
}

// invoke runs one invocation of the function with batch through the host:
// its timeout, restart, output bindings and send faults.
func (cf *ChangeFeed) invoke(ctx context.Context, batch []change) *Invocation {
	cf.mu.Lock()
	cf.stats.Invocations++
	n := cf.stats.Invocations
	cf.mu.Unlock()
	inv := &Invocation{ID: newGUID(), Function: cf.fn.Name, Started: time.Now()}
	docs := make([][]byte, len(batch))
	for i, c := range batch {
		docs[i] = c.doc
	}
	body := cf.h.opts.Encoder.Documents(cf.fn, docs)
	if cf.cfg.KillDuring != nil && cf.cfg.Kill != nil && cf.cfg.KillDuring(n) {
		inv.requestBody = func(r io.Reader) io.Reader {
			return &killMidway{r: r, left: len(body) / 2, kill: sync.OnceFunc(func() {
				cf.mu.Lock()
				cf.stats.Kills++
				cf.mu.Unlock()
				if err := cf.cfg.Kill(); err != nil {
					cf.cfg.Log(fmt.Sprintf("%s: kill during invocation %s: %v", cf.fn.Name, inv.ID, err))
				}
			})}
		}
	}
	cf.h.call(ctx, cf.fn, inv, body)
	inv.Took = time.Since(inv.Started)
	if cf.cfg.Observe != nil && ctx.Err() == nil {
		cf.cfg.Observe(inv)
	}
	return inv
}

// killMidway passes the first left bytes of a request body, then kills the
// handler and ends the body with an error, so the request never completes.
type killMidway struct {
	r    io.Reader
	left int
	kill func() // once
}

func (k *killMidway) Read(p []byte) (int, error) {
	if k.left <= 0 {
		k.kill()
		return 0, errors.New("the handler was killed mid-invocation")
	}
	if len(p) > k.left {
		p = p[:k.left]
	}
	n, err := k.r.Read(p)
	k.left -= n
	return n, err
}

// Drain waits until every range of one trigger, run by the instances feeds,
// has been read without anything new in a poll that started after since,
// by whichever instance reads it: every change made before since has then
// been delivered or checkpointed past. Polls stop waiting out the poll
// delay meanwhile (retry delays are kept). It fails when ctx ends first.
func Drain(ctx context.Context, since time.Time, feeds ...*ChangeFeed) error {
	for _, cf := range feeds {
		cf.draining.Store(true)
	}
	for {
		done := len(feeds) > 0
		for r := range feeds[0].cfg.Ranges {
			caught := false
			for _, cf := range feeds {
				cf.mu.Lock()
				caught = caught || cf.caughtUp[strconv.Itoa(r)].After(since)
				cf.mu.Unlock()
			}
			done = done && caught
		}
		if done {
			return nil
		}
		if !wait(ctx, 20*time.Millisecond) {
			return fmt.Errorf("%s: the change feed did not catch up: %w", feeds[0].fn.Name, context.Cause(ctx))
		}
	}
}

func (cf *ChangeFeed) noteCaughtUp(rangeID string, began time.Time) {
	cf.mu.Lock()
	defer cf.mu.Unlock()
	cf.caughtUp[rangeID] = began
}

// sleep waits out the poll delay, or a moment while draining.
func (cf *ChangeFeed) sleep(ctx context.Context) {
	d := cf.pollDelay
	if cf.draining.Load() {
		d = 20 * time.Millisecond
	}
	waitOr(ctx, cf.retiring.Done(), d)
}

// wait waits d unless ctx ends first; it reports whether d passed.
func wait(ctx context.Context, d time.Duration) bool { return waitOr(ctx, nil, d) }

// waitOr waits d unless ctx ends or stop is closed first (a nil stop never
// is); it reports whether d passed.
func waitOr(ctx context.Context, stop <-chan struct{}, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	case <-stop:
		return false
	}
}
