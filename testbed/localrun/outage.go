package localrun

import (
	"context"
	"fmt"
	"time"

	"github.com/ordersink/orders-consumer/testbed/chaos"
	"github.com/ordersink/orders-consumer/testbed/hostemu"
	"github.com/ordersink/orders-consumer/testbed/orderstream"
)

// DefaultOutages is the outage of make run's default stream: Cosmos
// unreachable for 30 s once a quarter of the messages are settled.
var DefaultOutages = []chaos.Outage{{Kind: chaos.Unreachable, After: 0.25, For: 30 * time.Second}}

// cosmosOutages puts the chaos fault proxy, with no fault rates, between the
// handler and Cosmos, and takes Cosmos away for the run's outage phases. The
// zero value (no phases) does nothing.
type cosmosOutages struct {
	phases   []chaos.Outage
	proxy    *chaos.Proxy
	ledger   *chaos.Ledger
	schedule *chaos.OutageSchedule
	cancel   context.CancelFunc
	records  []chaos.OutageRecord
}

// startCosmosProxy starts the proxy when there are phases and points the
// handler's COSMOS_ENDPOINT at it.
func startCosmosProxy(settings *hostemu.Settings, phases []chaos.Outage) (*cosmosOutages, error) {
	c := &cosmosOutages{phases: phases}
	if len(phases) == 0 {
		return c, nil
	}
	endpoint, _ := settings.Get("COSMOS_ENDPOINT")
	c.ledger = chaos.NewLedger()
	p, err := chaos.StartProxy(chaos.ProxyConfig{Upstream: endpoint, Observe: c.ledger.Observe})
	if err != nil {
		return nil, fmt.Errorf("outages need the fault proxy in front of Cosmos (-outages none to run without): %w", err)
	}
	c.proxy = p
	settings.Set("COSMOS_ENDPOINT", p.URL())
	return c, nil
}

// start runs the phases while the host delivers: each starts when its share
// of the queue's messages is settled.
func (c *cosmosOutages) start(ctx context.Context, q *hostemu.Queue, logf func(string, ...any)) {
	if c.proxy == nil {
		return
	}
	ctx, c.cancel = context.WithCancel(ctx)
	c.schedule = chaos.StartOutages(ctx, c.phases, c.proxy, func() float64 {
		n := q.Counts()
		return float64(n.Completed+n.DeadLettered) / float64(max(n.Sent, 1))
	}, logf)
}

// stop ends the phase under way, if any, and keeps what took place.
func (c *cosmosOutages) stop() {
	if c.schedule == nil {
		return
	}
	c.cancel()
	c.records = c.schedule.Wait()
}

func (c *cosmosOutages) close() {
	if c.proxy != nil {
		_ = c.proxy.Close()
	}
}

// recoveries measures each outage from the invocations: when the valid
// orders were delivered, which were given up on, and when Cosmos answered
// their creates (the proxy's ledger).
func (c *cosmosOutages) recoveries(invs []*hostemu.Invocation, dls []hostemu.DeadLetter) []chaos.Recovery {
	if len(c.records) == 0 {
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
	for _, dl := range dls {
		if cl := orderstream.Classify(dl.Message); cl.Valid {
			givenUp[cl.OrderID] = true
		}
	}
	createdAt := c.ledger.CreatedAt()
	out := make([]chaos.Recovery, len(c.records))
	for i, r := range c.records {
		out[i] = chaos.MeasureRecovery(r, createdAt, delivered, givenUp)
	}
	return out
}
