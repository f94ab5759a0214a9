package chaos

import (
	"fmt"

	"github.com/ordersink/orders-consumer/cosmos"
	"github.com/ordersink/orders-consumer/testbed/hostemu"
	"github.com/ordersink/orders-consumer/testbed/orderstream"
	"github.com/ordersink/orders-consumer/testbed/rig"
	"github.com/ordersink/orders-consumer/testbed/verify"
)

// httpPart is a run's HTTP part: the clients' submissions and the faults
// aimed at their key records. In a run without HTTP submissions both are
// nil, and its methods do nothing.
type httpPart struct {
	injected orderstream.SubmitInjected
	submits  *SubmitLedger
	faults   *KeyFaults
}

func newHTTPPart(cfg Config, app *hostemu.App) (httpPart, error) {
	if cfg.Submissions.Orders == 0 {
		return httpPart{}, nil
	}
	if app.Function("SubmitOrder") == nil {
		return httpPart{}, fmt.Errorf("HTTP submissions go to SubmitOrder, which %s does not have (-http-orders 0 for none)", app.Root)
	}
	opts := cfg.Submissions
	opts.Seed = cfg.Seed
	subs, injected, err := orderstream.GenerateSubmissions(opts)
	if err != nil {
		return httpPart{}, err
	}
	subs = MeetOutages(subs, cfg.Outages)
	return httpPart{injected: injected, submits: NewSubmitLedger(subs),
		faults: newKeyFaults(cosmos.KeyContainer, subs, cfg.KeyKills, cfg.KeyLostAnswers)}, nil
}

// configure sets the handler's key settings: the key container and the
// run's short clocks.
func (h httpPart) configure(s *hostemu.Settings, cfg Config) {
	if h.submits == nil {
		return
	}
	s.Set("IDEMPOTENCY_CONTAINER", cosmos.KeyContainer)
	if cfg.KeyLease > 0 {
		s.Set("IDEMPOTENCY_LEASE", cfg.KeyLease.String())
	}
	if cfg.SubmitDeadline > 0 {
		s.Set("SUBMIT_DEADLINE", cfg.SubmitDeadline.String())
	}
}

// rig adds the HTTP listener, the clients and the key faults to a
// delivery, and arms the kills once the handler runs. r has its Proxy and
// its Watch already (Run sets both first): the faults pick through the
// one, the kills are armed around the other.
func (h httpPart) rig(r *rig.Config, tracker *verify.Tracker) {
	if h.submits == nil {
		return
	}
	r.HTTPAddr, r.FunctionKeys = "127.0.0.1:0", ClientKeys
	r.Traffic = h.submits.Traffic(ClientKeys)
	r.Enqueued = tracker.Enqueued
	r.Proxy.Pick = h.faults.Pick
	watch := r.Watch
	r.Watch = func(l *rig.Live) func() {
		h.faults.setKill(l.Fleet.Kill)
		return watch(l)
	}
}

func (h httpPart) report(outcomes *verify.OutcomeLog) *HTTPFigures {
	if h.submits == nil {
		return nil
	}
	r := &HTTPFigures{Injected: h.injected, Answers: h.submits.Counts(), KeyFaults: h.faults.Counts()}
	r.TookOver, r.Fenced = outcomes.KeyTakeovers()
	return r
}
