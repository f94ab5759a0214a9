package chaos

import (
	"fmt"
	"time"

	"github.com/ordersink/orders-consumer/cosmos"
	"github.com/ordersink/orders-consumer/testbed/hostemu"
	"github.com/ordersink/orders-consumer/testbed/orderstream"
	"github.com/ordersink/orders-consumer/testbed/rig"
	"github.com/ordersink/orders-consumer/testbed/verify"
)

// httpPart is a run's HTTP part; nil when the run has none (its methods
// then do nothing).
type httpPart struct {
	keyLease     time.Duration
	deadline     time.Duration
	injected     orderstream.SubmitInjected
	submits      *SubmitLedger
	faults       *KeyFaults
	keyContainer string
}

func newHTTPPart(cfg Config, app *hostemu.App) (*httpPart, error) {
	if cfg.Submissions.Orders == 0 {
		return nil, nil
	}
	if app.Function("SubmitOrder") == nil {
		return nil, fmt.Errorf("HTTP submissions go to SubmitOrder, which %s does not have (-http-orders 0 for none)", app.Root)
	}
	opts := cfg.Submissions
	opts.Seed = cfg.Seed
	subs, injected, err := orderstream.GenerateSubmissions(opts)
	if err != nil {
		return nil, err
	}
	subs = MeetOutages(subs, cfg.Outages)
	return &httpPart{keyLease: cfg.KeyLease, deadline: cfg.SubmitDeadline, injected: injected, submits: NewSubmitLedger(subs), keyContainer: cosmos.KeyContainer,
		faults: newKeyFaults(cosmos.KeyContainer, subs, cfg.KeyKills, cfg.KeyLostAnswers)}, nil
}

// configure sets the handler's key settings: the run's container and its
// short clocks.
func (h *httpPart) configure(s *hostemu.Settings) {
	if h == nil {
		return
	}
	s.Set("IDEMPOTENCY_CONTAINER", h.keyContainer)
	if h.keyLease > 0 {
		s.Set("IDEMPOTENCY_LEASE", h.keyLease.String())
	}
	if h.deadline > 0 {
		s.Set("SUBMIT_DEADLINE", h.deadline.String())
	}
}

// rig adds the HTTP listener, the clients and the key faults to a delivery.
func (h *httpPart) rig(r *rig.Config, tracker *verify.Tracker) {
	if h == nil {
		return
	}
	r.HTTPAddr, r.FunctionKeys = "127.0.0.1:0", ClientKeys
	r.Traffic = h.submits.Traffic(ClientKeys)
	r.Enqueued = tracker.Enqueued
	if r.Proxy != nil {
		r.Proxy.Pick = h.faults.Pick
	}
}

// started arms the kills once the handler runs.
func (h *httpPart) started(l *rig.Live) {
	if h != nil {
		h.faults.setKill(l.Fleet.Kill)
	}
}

func (h *httpPart) report(outcomes *verify.OutcomeLog) *HTTPFigures {
	if h == nil {
		return nil
	}
	r := &HTTPFigures{Injected: h.injected, Answers: h.submits.Counts(), KeyFaults: h.faults.Counts()}
	r.TookOver, r.Fenced = outcomes.KeyTakeovers()
	return r
}

func (h *httpPart) ledger() *SubmitLedger {
	if h == nil {
		return nil
	}
	return h.submits
}

func (h *httpPart) keyFaults() *KeyFaults {
	if h == nil {
		return nil
	}
	return h.faults
}
