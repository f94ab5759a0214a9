package rig

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ordersink/orders-consumer/testbed/faults"
	"github.com/ordersink/orders-consumer/testbed/hostemu"
)

// InstanceHeader names, in an answer of the HTTP listener, the instance
// that served the request. A request carrying "not:N" in it goes to another
// instance than N (a read on another instance right after a write).
const InstanceHeader = "X-Testbed-Instance"

// instance is one instance of the function app, as Flex Consumption or
// Elastic Premium scale out: its own handler process (slots, Cosmos client,
// circuit breaker), its host reading the shared queue, its HTTP front, its
// run of the change feed trigger, and its own listener on the fault proxy.
type instance struct {
	n      int
	worker *hostemu.Worker
	host   *hostemu.Host
	front  *hostemu.HTTPFront
	feed   *hostemu.ChangeFeed
	stop   context.CancelFunc
	ran    chan struct{} // closed when the host's Run returned err
	err    error
	fed    chan struct{} // closed when its change feed stopped
}

// Fleet is a delivery's instances: those live, and all that ran.
type Fleet struct {
	cfg   *Config
	queue *hostemu.Queue
	proxy *faults.Proxy
	pub   *publisher
	ctx   context.Context
	next  atomic.Uint64 // round robin

	mu   sync.Mutex
	live []*instance
	all  []*instance
	// kills are when each instance's handler was killed, for the figures.
	kills []InstanceKill
}

// InstanceKill is one kill of an instance's handler, and how long after
// it the instance first completed a queue invocation started after it
// (0: it did not); Took is how long that invocation itself ran (the
// faults it met, not the restart).
type InstanceKill struct {
	Instance   int
	At         time.Time
	Back, Took time.Duration
}

// observe books an instance's invocation for the kills' figures and passes
// it on.
func (f *Fleet) observe(n int) func(*hostemu.Invocation) {
	return func(inv *hostemu.Invocation) {
		f.mu.Lock()
		for i, k := range f.kills {
			if k.Instance == n && k.Back == 0 && inv.OK() && inv.Started.After(k.At) {
				f.kills[i].Back, f.kills[i].Took = inv.Started.Add(inv.Took).Sub(k.At), inv.Took
			}
		}
		f.mu.Unlock()
		if f.cfg.Observe != nil {
			f.cfg.Observe(inv)
		}
	}
}

// start starts instance n and returns once its handler answers.
func (f *Fleet) start(n int) error {
	settings := hostemu.NewSettings(f.cfg.Settings.Environ())
	if f.proxy != nil {
		url, err := f.proxy.Listen(n)
		if err != nil {
			return err
		}
		settings.Set("COSMOS_ENDPOINT", url)
	}
	log := func(s string) { f.cfg.Log(fmt.Sprintf("instance %d: %s", n, s)) }
	w, err := f.cfg.App.StartHandler(f.cfg.Executable, settings, f.cfg.HandlerOutput, log)
	if err != nil {
		return err
	}
	in := &instance{n: n, worker: w, ran: make(chan struct{})}
	if in.host, err = f.newHost(w, f.observe(n), log); err != nil {
		w.Stop(0)
		return err
	}
	if _, err := w.Endpoint(f.ctx); err != nil {
		w.Stop(0)
		return fmt.Errorf("start the handler: %w", err)
	}
	if f.cfg.HTTPAddr != "" {
		if in.front, err = in.host.HTTP(hostemu.HTTPOptions{Functions: f.cfg.App.Functions, RoutePrefix: f.cfg.App.Host.RoutePrefix,
			FunctionKeys: f.cfg.FunctionKeys, Observe: f.cfg.ObserveHTTP}); err != nil {
			w.Stop(0)
			return err
		}
	}
	ctx, stop := context.WithCancel(f.ctx)
	in.stop = stop
	if f.pub != nil {
		if in.feed, err = f.pub.feedOn(in.host, w, log); err != nil {
			stop()
			w.Stop(0)
			return err
		}
		in.fed = make(chan struct{})
		go func() { defer close(in.fed); f.pub.run(ctx, in.feed, log) }()
	}
	go func() { in.err = in.host.Run(ctx); close(in.ran) }()
	f.mu.Lock()
	f.live, f.all = append(f.live, in), append(f.all, in)
	f.mu.Unlock()
	return nil
}

// retire stops the last live instance: scaled in, it finishes its
// invocations in flight (its change feed's batches checkpointed, as the
// host does on scale-in: Azure's DrainMode) and gives its leases back; crashed, its handler
// is killed, failing them, and its leases are left to expire.
func (f *Fleet) retire(crash bool) {
	f.mu.Lock()
	if len(f.live) <= 1 {
		f.mu.Unlock()
		return
	}
	in := f.live[len(f.live)-1]
	f.live = f.live[:len(f.live)-1]
	f.mu.Unlock()
	f.cfg.Log(fmt.Sprintf("instance %d: %s", in.n, map[bool]string{true: "crashes", false: "scaled in"}[crash]))
	in.host.StopReceiving()
	switch {
	case crash:
		if in.feed != nil {
			in.feed.Crash()
		}
		in.worker.Stop(0) // its invocations in flight fail
	case in.feed != nil:
		in.feed.Retire()
		// No deadline of its own: the batch in flight ends within the
		// invocation's functionTimeout, as on Azure, whose scale-in grace
		// (60 min on Flex Consumption and Premium) outlasts our 5 min.
		<-in.fed
	}
	<-in.ran
	in.stop()
	if in.fed != nil {
		<-in.fed // a crashed feed ends once stop cancels it (a retired one has ended)
	}
	in.worker.Stop(20 * time.Second)
}

// Kill SIGKILLs the handler of instance n (0: the next live one, round
// robin); its worker restarts it.
func (f *Fleet) Kill(n int) error {
	f.mu.Lock()
	var in *instance
	for _, l := range f.live {
		if l.n == n {
			in = l
		}
	}
	if n == 0 && len(f.live) > 0 {
		in = f.live[int(f.next.Add(1))%len(f.live)]
	}
	f.mu.Unlock()
	if in == nil {
		return fmt.Errorf("instance %d is not running", n)
	}
	if err := in.worker.Kill(); err != nil {
		return fmt.Errorf("instance %d: %w", in.n, err)
	}
	f.mu.Lock()
	f.kills = append(f.kills, InstanceKill{Instance: in.n, At: time.Now()})
	f.mu.Unlock()
	return nil
}

// Stats sums what happened to the handler processes of every instance.
func (f *Fleet) Stats() hostemu.WorkerStats {
	f.mu.Lock()
	defer f.mu.Unlock()
	var s hostemu.WorkerStats
	for _, in := range f.all {
		w := in.worker.Stats()
		s.Starts, s.Kills, s.UnexpectedExits = s.Starts+w.Starts, s.Kills+w.Kills, s.UnexpectedExits+w.UnexpectedExits
		s.StartErrors, s.TimeoutRestarts = s.StartErrors+w.StartErrors, s.TimeoutRestarts+w.TimeoutRestarts
	}
	return s
}

// ServeHTTP is the app's HTTP listener in front of the instances: each
// request to one of them, round robin, and the answer names it
// (InstanceHeader).
func (f *Fleet) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	avoid := -1
	if v, ok := strings.CutPrefix(r.Header.Get(InstanceHeader), "not:"); ok {
		avoid, _ = strconv.Atoi(v)
	}
	f.mu.Lock()
	var in *instance
	for range len(f.live) {
		in = f.live[int(f.next.Add(1))%len(f.live)]
		if in.n != avoid {
			break
		}
	}
	f.mu.Unlock()
	if in == nil || in.front == nil {
		http.Error(w, "no instance is running", http.StatusServiceUnavailable)
		return
	}
	w.Header().Set(InstanceHeader, strconv.Itoa(in.n))
	in.front.ServeHTTP(w, r)
}

// wait waits until the host of every live instance has delivered the
// queue, instances started meanwhile included, and returns their errors.
func (f *Fleet) wait() error {
	waited := map[*instance]bool{}
	var errs []error
	for {
		f.mu.Lock()
		var in *instance
		for _, l := range f.live {
			if !waited[l] {
				in = l
			}
		}
		f.mu.Unlock()
		if in == nil {
			return errors.Join(errs...)
		}
		<-in.ran
		waited[in] = true
		f.mu.Lock()
		retired := !slices.Contains(f.live, in)
		f.mu.Unlock()
		if in.err != nil && !retired {
			errs = append(errs, fmt.Errorf("instance %d: %w", in.n, in.err))
		}
	}
}

// halt stops every instance's host and change feed, then its handler.
func (f *Fleet) halt() {
	f.mu.Lock()
	all := f.all
	f.mu.Unlock()
	for _, in := range all {
		in.stop()
		if in.fed != nil {
			<-in.fed
		}
	}
	for _, in := range all {
		in.worker.Stop(20 * time.Second)
	}
}

// steer runs the delivery's plan as the queue settles: Kills spread over
// it, each on the next live instance; with Scale, the fleet grows from one
// instance to Instances at 10 % and shrinks back to one at 70 %, the last
// instance to go crashing (its leases expire) and the others scaled in.
func (f *Fleet) steer(ctx context.Context, settled func() float64) {
	type step struct {
		at float64
		do func()
	}
	var steps []step
	for i := 1; i <= f.cfg.Kills; i++ {
		steps = append(steps, step{float64(i) / float64(f.cfg.Kills+1), func() {
			if err := f.Kill(0); err != nil {
				f.cfg.Log(fmt.Sprintf("chaos: kill %d of %d: %v", i, f.cfg.Kills, err))
			}
		}})
	}
	if n := f.cfg.Instances; f.cfg.Scale && n > 1 {
		steps = append(steps, step{0.1, func() {
			for range n - 1 {
				if err := f.start(f.started() + 1); err != nil {
					f.cfg.Log("scale out: " + err.Error())
				}
			}
		}}, step{0.7, func() {
			for i := n; i > 1; i-- {
				f.retire(i == n)
			}
		}})
	}
	slices.SortStableFunc(steps, func(a, b step) int { return cmp.Compare(a.at, b.at) })
	for _, s := range steps {
		if !faults.WaitFor(ctx, func() bool { return settled() >= s.at }) {
			return
		}
		s.do()
	}
}

func (f *Fleet) started() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.all)
}

// routes are the HTTP routes the instances serve (all serve the same).
func (f *Fleet) routes() []hostemu.HTTPRoute {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.live) == 0 || f.live[0].front == nil {
		return nil
	}
	return f.live[0].front.Routes()
}
