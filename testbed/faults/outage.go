package faults

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ordersink/orders-consumer/cosmos/cosmostest"
)

// OutageKind is how Cosmos fails while an outage lasts. Unlike a Fault,
// which one request in several gets, an outage takes every request, the
// account and metadata reads included, for a stretch of time.
type OutageKind int

// The outage kinds.
const (
	// Unreachable resets every connection without an answer: the
	// endpoint is down or the network path to it is gone.
	Unreachable OutageKind = iota + 1
	// Forbidden answers 403 with sub-status 5301: the data-plane role
	// assignment has not propagated yet (minutes after a deployment), or a
	// credential was rotated. The Cosmos SDK does not retry it.
	Forbidden
)

func (k OutageKind) String() string {
	switch k {
	case Unreachable:
		return "unreachable"
	case Forbidden:
		return "403-forbidden"
	}
	return fmt.Sprintf("outage(%d)", int(k))
}

// Outage is one phase of a run: Cosmos fails as Kind for For, starting once
// After of the messages (a fraction, 0 to 1) are settled. Until, when not
// nil, ends the phase when it is closed instead: an outage that lasts until
// something has happened (a test's; the command lines take lengths).
type Outage struct {
	Kind  OutageKind
	After float64
	For   time.Duration
	Until <-chan struct{}
}

// DefaultOutages are the phases of `make chaos`: Cosmos unreachable for a
// minute, longer than nine immediate redeliveries take even with the SDK's
// own retries, then a 403 window of 30 s, in which nine deliveries without
// SDK retries take about a second.
var DefaultOutages = []Outage{
	{Kind: Unreachable, After: 0.15, For: time.Minute},
	{Kind: Forbidden, After: 0.55, For: 30 * time.Second},
}

// Validate refuses a phase that cannot run.
func (o Outage) Validate() error {
	if o.Kind != Unreachable && o.Kind != Forbidden {
		return fmt.Errorf("outage kind %d: want %s or %s", int(o.Kind), Unreachable, Forbidden)
	}
	if o.After < 0 || o.After >= 1 || o.For <= 0 && o.Until == nil {
		return fmt.Errorf("outage %s after %g for %s: want a start in [0,1) and a positive length", o.Kind, o.After, o.For)
	}
	return nil
}

// OutageRecord is when one outage took place. End is zero when the run
// ended before it started.
type OutageRecord struct {
	Outage
	Start, End time.Time
}

// SetOutage makes every request from now on fail as kind; 0 ends the outage.
func (p *Proxy) SetOutage(kind OutageKind) { p.outage.Store(int32(kind)) }

// InOutage reports whether an outage is on.
func (p *Proxy) InOutage() bool { return p.outage.Load() != 0 }

// serveOutage answers a request during an outage and reports whether it did.
func (p *Proxy) serveOutage(w http.ResponseWriter) bool {
	switch OutageKind(p.outage.Load()) {
	case Unreachable:
		p.n.outageAnswers.Add(1)
		cosmostest.CloseConnection(w, true)
		return true
	case Forbidden:
		p.n.outageAnswers.Add(1)
		writeCosmosError(w, http.StatusForbidden, "5301", "Forbidden",
			"Request blocked by Auth: the principal does not have the required RBAC permissions (injected by the fault proxy)")
		return true
	}
	return false
}

// OutageSchedule runs the phases in order against a proxy.
type OutageSchedule struct {
	mu      sync.Mutex
	records []OutageRecord
	done    chan struct{}
}

// StartOutages runs phases one after another: each starts when settled()
// reaches its After and ends For later. Cancelling ctx ends the current
// outage at once; Wait returns the records.
func StartOutages(ctx context.Context, phases []Outage, p *Proxy, settled func() float64, logf func(string, ...any)) *OutageSchedule {
	s := &OutageSchedule{done: make(chan struct{})}
	// A phase due at once (After 0) starts before StartOutages returns, so
	// no delivery slips through ahead of it.
	var begun time.Time
	if len(phases) > 0 && settled() >= phases[0].After {
		begun = time.Now()
		p.SetOutage(phases[0].Kind)
	}
	go func() {
		defer close(s.done)
		defer p.SetOutage(0)
		for i, o := range phases {
			start := begun
			if i > 0 || start.IsZero() {
				if !WaitFor(ctx, func() bool { return settled() >= o.After }) || ctx.Err() != nil {
					return // the run ended first
				}
				start = time.Now()
				p.SetOutage(o.Kind)
			}
			var over <-chan time.Time // nil: until Until is closed
			length := "as long as the run asks"
			if o.Until == nil {
				over, length = time.After(o.For), o.For.String()
			}
			logf("outage: Cosmos %s for %s (%.0f%% of the messages settled)", o.Kind, length, 100*settled())
			select {
			case <-over:
			case <-o.Until:
			case <-ctx.Done():
			}
			p.SetOutage(0)
			end := time.Now()
			logf("outage: Cosmos answers again after %s", end.Sub(start).Round(time.Millisecond))
			s.mu.Lock()
			s.records = append(s.records, OutageRecord{Outage: o, Start: start, End: end})
			s.mu.Unlock()
		}
	}()
	return s
}

// Wait ends the schedule's wait for phases not started (ctx must be
// cancelled first) and returns what took place.
func (s *OutageSchedule) Wait() []OutageRecord {
	if s.done == nil {
		return nil // no phases were started
	}
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]OutageRecord(nil), s.records...)
}

// WaitFor polls cond every 50 ms until it holds (true) or ctx ends (false):
// the outage schedule waits so, and so do the HTTP clients that meet it.
func WaitFor(ctx context.Context, cond func() bool) bool {
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	for !cond() {
		select {
		case <-t.C:
		case <-ctx.Done():
			return false
		}
	}
	return true
}

// ParseOutages reads "unreachable@0.15:1m,403-forbidden@0.55:30s" or "none".
func ParseOutages(s string) ([]Outage, error) {
	if strings.TrimSpace(s) == "none" {
		return nil, nil
	}
	var out []Outage
	for _, part := range strings.Split(s, ",") {
		if part = strings.TrimSpace(part); part == "" {
			continue
		}
		kind, rest, ok1 := strings.Cut(part, "@")
		after, length, ok2 := strings.Cut(rest, ":")
		o := Outage{}
		var err1, err2 error
		o.After, err1 = strconv.ParseFloat(after, 64)
		o.For, err2 = time.ParseDuration(length)
		for _, k := range []OutageKind{Unreachable, Forbidden} {
			if k.String() == kind {
				o.Kind = k
			}
		}
		if !ok1 || !ok2 || err1 != nil || err2 != nil || o.Kind == 0 {
			return nil, fmt.Errorf("-outages: %q is not kind@fraction:length, e.g. unreachable@0.15:1m (kinds %s, %s)", part, Unreachable, Forbidden)
		}
		if err := o.Validate(); err != nil {
			return nil, fmt.Errorf("-outages: %w", err)
		}
		out = append(out, o)
	}
	return out, nil
}

// FormatOutages writes phases as ParseOutages reads them.
func FormatOutages(phases []Outage) string {
	if len(phases) == 0 {
		return "none"
	}
	parts := make([]string, len(phases))
	for i, o := range phases {
		parts[i] = fmt.Sprintf("%s@%g:%s", o.Kind, o.After, o.For)
	}
	return strings.Join(parts, ",")
}
