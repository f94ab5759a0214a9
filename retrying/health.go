package retrying

import (
	"context"
	"errors"
	"math/rand/v2"
	"net/http"
	"sync"
	"time"

	"github.com/ordersink/orders-consumer/orders"
)

// Health is the store's health as every invocation of the process sees it: a
// circuit breaker. While the store is down, one invocation at a time (the
// probe) tries its own write; the others wait, without sending anything,
// until a probe gets an answer, and then all of them go on together. So a
// Cosmos DB that is down sees one request per probe interval, not one per
// held invocation, and a Cosmos DB that is back serves them all within one
// probe interval (docs/adr/0007-holding-through-outages.md).
// Pattern: Circuit breaker (docs/design-patterns.md#circuit-breaker).
type Health struct {
	// ProbeInterval is the longest pause between two probes; the pauses grow
	// from a tenth of it. Zero means DefaultProbeInterval.
	ProbeInterval time.Duration
	// OnChange, when set, is told when the store goes down, when it comes
	// back, and after every failed probe. It is called with the state
	// locked: it must not call the Health back.
	OnChange func(HealthChange)

	mu        sync.Mutex
	down      bool
	since     time.Time // when the store went down
	lastErr   error
	probing   bool
	failures  int           // failed probes since the store went down
	nextProbe time.Time     // no probe before this
	changed   chan struct{} // closed and replaced on every state change
}

// HealthChange is what Health.OnChange is told.
type HealthChange struct {
	Down         bool
	Since        time.Time // when the store went down
	FailedProbes int       // probes failed since then
	Err          error     // the error that brought it down or failed the probe; the answer that brought it back
}

// DefaultProbeInterval bounds how long waiters stay held after the store
// answers again, which the consumer promises within 5 s (docs/contract.md §2).
const DefaultProbeInterval = time.Second

// Down reports whether the store is down and since when.
func (h *Health) Down() (bool, time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.down, h.since
}

// wait returns when the caller may send a request: at once while the store
// is up; while it is down, when the caller is the next probe (probe true) or
// when another probe got an answer. It returns ctx's error when ctx ends
// first, and with it the last error the store gave.
func (h *Health) wait(ctx context.Context) (probe bool, err error) {
	for {
		h.mu.Lock()
		if h.changed == nil {
			h.changed = make(chan struct{})
		}
		if !h.down {
			h.mu.Unlock()
			return false, nil
		}
		now := time.Now()
		if !h.probing && !now.Before(h.nextProbe) {
			h.probing = true
			h.mu.Unlock()
			return true, nil
		}
		changed, until, last := h.changed, h.nextProbe.Sub(now), h.lastErr
		if h.probing {
			until = h.interval() // the probe's answer closes changed
		}
		h.mu.Unlock()
		timer := time.NewTimer(max(until, time.Millisecond))
		select {
		case <-changed:
		case <-timer.C:
		case <-ctx.Done():
			timer.Stop()
			return false, errors.Join(ctx.Err(), last)
		}
		timer.Stop()
	}
}

// observe records what one request learned: err nil or an answer from the
// store (StoreDown false) brings the store up and releases every waiter; a
// StoreDown error brings it down, or schedules the next probe.
func (h *Health) observe(probe bool, err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.changed == nil {
		h.changed = make(chan struct{})
	}
	if probe {
		h.probing = false
	}
	if !StoreDown(err) {
		if h.down {
			h.down, h.failures = false, 0
			h.notify(false, err)
		} else if probe {
			h.release()
		}
		return
	}
	h.lastErr = err
	if !h.down {
		h.down, h.since, h.failures = true, time.Now(), 0
		h.nextProbe = time.Now().Add(h.pause())
		h.notify(true, err)
		return
	}
	if probe {
		h.failures++
		h.nextProbe = time.Now().Add(h.pause())
		h.notify(true, err)
	}
}

// abandon ends a probe that learned nothing (its invocation ran out of
// time), so that a waiter probes at once.
func (h *Health) abandon(probe bool) {
	if !probe {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.probing = false
	if h.changed != nil {
		h.release()
	}
}

// notify tells OnChange and wakes every waiter; h.mu is held.
func (h *Health) notify(down bool, err error) {
	if h.OnChange != nil {
		h.OnChange(HealthChange{Down: down, Since: h.since, FailedProbes: h.failures, Err: err})
	}
	h.release()
}

func (h *Health) release() {
	close(h.changed)
	h.changed = make(chan struct{})
}

// pause is the wait before the next probe: growing from a tenth of the
// interval to all of it, with jitter so that the processes of a scaled-out
// app do not probe in step.
func (h *Health) pause() time.Duration {
	return Backoff{Initial: h.interval() / 10, Max: h.interval()}.Pause(h.failures)
}

func (h *Health) interval() time.Duration {
	if h.ProbeInterval <= 0 {
		return DefaultProbeInterval
	}
	return h.ProbeInterval
}

// StoreDown reports whether err means the store cannot serve anyone right
// now: no answer at all (refused, reset, timed out), an authorization
// refusal (a role assignment still propagating, a rotated credential), or a
// server error. Throttling and lost races are answers: the store is up.
func StoreDown(err error) bool {
	if err == nil {
		return false
	}
	var se *orders.StoreError
	if !errors.As(err, &se) {
		return true
	}
	if !se.Transient() {
		return false
	}
	switch {
	case se.Status == 0, se.Status == http.StatusUnauthorized, se.Status == http.StatusForbidden,
		se.Status == http.StatusRequestTimeout, se.Status >= 500:
		return true
	}
	return false
}

// Backoff is capped exponential back-off with jitter.
// Pattern: Retry with back-off and deadline (docs/design-patterns.md#retry-with-back-off-and-deadline).
type Backoff struct {
	Initial, Max time.Duration
}

// Pause returns the wait after the given number of failures (0 for the
// first): between half and all of Initial·2^failures, at most Max.
func (b Backoff) Pause(failures int) time.Duration {
	d := b.Initial
	for i := 0; i < failures && d < b.Max; i++ {
		d *= 2
	}
	d = min(d, b.Max)
	if d <= 1 {
		return d
	}
	return d/2 + rand.N(d/2)
}
