package localrun

import (
	"time"

	"github.com/ordersink/orders-consumer/testbed/chaos"
	"github.com/ordersink/orders-consumer/testbed/hostemu"
	"github.com/ordersink/orders-consumer/testbed/orderstream"
)

// DefaultOutages is the outage of make run's default stream: Cosmos
// unreachable for 30 s once a quarter of the messages are settled.
var DefaultOutages = []chaos.Outage{{Kind: chaos.Unreachable, After: 0.25, For: 30 * time.Second}}

// recoveries measures each outage from the invocations: when the valid
// orders were delivered, which were given up on, and when Cosmos answered
// their creates (the proxy's ledger).
func recoveries(res *chaos.RigResult, invs []*hostemu.Invocation) []chaos.Recovery {
	if len(res.Outages) == 0 {
		return nil
	}
	delivered := map[string][]chaos.Span{}
	givenUp := map[string]bool{}
	for _, inv := range invs {
		for _, d := range inv.Deliveries {
			if cl := orderstream.Classify(d.Message); cl.Valid {
				delivered[cl.OrderID] = append(delivered[cl.OrderID], chaos.Span{Start: inv.Started, End: inv.Started.Add(inv.Took)})
			}
		}
		for _, o := range inv.Outputs {
			if env, err := orderstream.ParseEnvelope(o.Text); err == nil && env.Reason == reasonExhausted {
				givenUp[env.OrderID] = true
			}
		}
	}
	for _, dl := range res.DeadLetters {
		if cl := orderstream.Classify(dl.Message); cl.Valid {
			givenUp[cl.OrderID] = true
		}
	}
	createdAt := res.Ledger.CreatedAt()
	out := make([]chaos.Recovery, len(res.Outages))
	for i, r := range res.Outages {
		out[i] = chaos.MeasureRecovery(r, createdAt, delivered, givenUp)
	}
	return out
}
