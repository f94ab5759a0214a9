package localrun

import (
	"time"

	"github.com/ordersink/orders-consumer/testbed/chaos"
	"github.com/ordersink/orders-consumer/testbed/hostemu"
)

// DefaultOutages is the outage of make run's default stream: Cosmos
// unreachable for 30 s once a quarter of the messages are settled.
var DefaultOutages = []chaos.Outage{{Kind: chaos.Unreachable, After: 0.25, For: 30 * time.Second}}

// checkIncidents runs the incident and clock checks make chaos runs too (no
// valid order given up on; orders created again soon after each outage;
// every invocation within the platform's clocks) over this run's
// invocations, and keeps each outage's figures.
func (r *Report) checkIncidents(msgs []*hostemu.Message, invs []*hostemu.Invocation, res *chaos.RigResult) {
	t := chaos.NewTracker(msgs)
	for _, inv := range invs {
		t.Observe(inv)
	}
	var createdAt map[string]time.Time
	if res.Ledger != nil {
		createdAt = res.Ledger.CreatedAt()
	}
	r.Incidents, r.Recoveries = chaos.IncidentChecks(msgs, t, res.Outages, createdAt, chaos.DefaultRecoveryBound)
	r.Incidents = append(r.Incidents, chaos.ClockCheck(len(invs), res.Queue, res.Worker))
}
