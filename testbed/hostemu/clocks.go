package hostemu

import (
	"errors"
	"flag"
	"fmt"
	"time"
)

// errFunctionTimeout is the cause of an invocation context that passed
// FunctionTimeout.
var errFunctionTimeout = errors.New("function timeout")

// timedOut fails an invocation that passed FunctionTimeout and restarts the
// handler like the host does for an out-of-process worker: the process is
// replaced, so every invocation in flight on it fails too. Invocations that
// time out together cause one restart, not one each.
func (h *Host) timedOut(inv *Invocation) {
	inv.TimedOut, inv.Status, inv.Protocol = true, 0, false
	inv.Failure = fmt.Sprintf("Timeout value of %s exceeded by function 'Functions.%s' (Id: '%s'); the host restarts the handler",
		formatTimeSpan(h.opts.FunctionTimeout), inv.Function, inv.ID)
	if h.opts.Restart == nil {
		return
	}
	h.mu.Lock()
	due := h.lastRestart.Before(inv.Started)
	if due {
		h.lastRestart = time.Now()
	}
	h.mu.Unlock()
	if !due {
		return // a restart since this invocation started already failed it
	}
	if err := h.opts.Restart(inv.Failure); err != nil {
		h.opts.Log(fmt.Sprintf("restart after the function timeout: %v", err))
	}
}

// renewLocks renews the locks of a single-message invocation while it runs,
// every half LockDuration, until MaxAutoLockRenewalDuration after the receive,
// as the Service Bus extension does; the lock then runs out at most one
// LockDuration later. A batch is never renewed. The returned func stops it.
func (h *Host) renewLocks(fn *Function, ds []Delivery) (stop func()) {
	lockFor := h.opts.Queue.LockDuration
	if fn.Trigger().Many() || h.opts.MaxAutoLockRenewalDuration <= 0 || lockFor <= 0 {
		return func() {}
	}
	renewUntil := ds[0].LockedUntil.Add(-lockFor).Add(h.opts.MaxAutoLockRenewalDuration)
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		tick := time.NewTicker(lockFor / 2)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case now := <-tick.C:
				if now.After(renewUntil) {
					return
				}
				for _, d := range ds {
					if !h.opts.Queue.renewLock(d) {
						return
					}
				}
			}
		}
	}()
	return func() { close(done); <-finished }
}

// formatTimeSpan writes d as host.json's TimeSpan (hh:mm:ss[.fff]).
func formatTimeSpan(d time.Duration) string {
	h, m := int(d/time.Hour), int(d%time.Hour/time.Minute)
	s := d % time.Minute
	if s%time.Second == 0 {
		return fmt.Sprintf("%02d:%02d:%02d", h, m, int(s/time.Second))
	}
	return fmt.Sprintf("%02d:%02d:%06.3f", h, m, s.Seconds())
}

// Clocks are the platform's time limits the emulator enforces: the queue's
// lock, the single-message lock renewal and functionTimeout. A run may scale
// them down (a lock of 2 s, a timeout of 5 s) to meet them in seconds; they
// are never switched off. Zero fields take host.json's value, and the
// queue's lock the orders queue's (DefaultLockDuration).
type Clocks struct {
	LockDuration, MaxAutoLockRenewal, FunctionTimeout time.Duration
}

// Resolve fills the zero fields from host.json and the defaults.
func (c Clocks) Resolve(h HostConfig) Clocks {
	if c.LockDuration <= 0 {
		c.LockDuration = DefaultLockDuration
	}
	if c.MaxAutoLockRenewal <= 0 {
		c.MaxAutoLockRenewal = h.MaxAutoLockRenewalDuration
	}
	if c.FunctionTimeout <= 0 {
		c.FunctionTimeout = h.FunctionTimeout
	}
	return c
}

// RegisterFlags adds -lock-duration, -max-lock-renewal and -function-timeout.
func (c *Clocks) RegisterFlags(fs *flag.FlagSet) {
	fs.DurationVar(&c.LockDuration, "lock-duration", 0, "the queue's lock duration (default "+DefaultLockDuration.String()+", as the orders queue); scale it down to meet lock expiries sooner")
	fs.DurationVar(&c.MaxAutoLockRenewal, "max-lock-renewal", 0, "how long a single message's lock is renewed (default: host.json maxAutoLockRenewalDuration)")
	fs.DurationVar(&c.FunctionTimeout, "function-timeout", 0, "an invocation past it restarts the handler (default: host.json functionTimeout)")
}

// String is the line a run prints about its clocks.
func (c Clocks) String() string {
	return fmt.Sprintf("lock %s (batches never renewed, single messages renewed up to %s), functionTimeout %s",
		c.LockDuration, c.MaxAutoLockRenewal, c.FunctionTimeout)
}

// Apply tells the handler the clocks a run scaled down, through the app
// settings a deployment would give it (docs/contract.md §2):
// QUEUE_LOCK_DURATION, HOST_MAX_AUTO_LOCK_RENEWAL and HOST_FUNCTION_TIMEOUT,
// so that its deadlines fit the clocks it lives under. Settings already
// given win; clocks not overridden are left to host.json.
func (c Clocks) Apply(s *Settings) {
	for name, d := range map[string]time.Duration{"QUEUE_LOCK_DURATION": c.LockDuration,
		"HOST_MAX_AUTO_LOCK_RENEWAL": c.MaxAutoLockRenewal, "HOST_FUNCTION_TIMEOUT": c.FunctionTimeout} {
		if _, set := s.Get(name); d > 0 && !set {
			s.Set(name, d.String())
		}
	}
}
