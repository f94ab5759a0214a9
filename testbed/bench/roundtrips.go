package bench

import (
	"fmt"

	"github.com/ordersink/orders-consumer/handler"
	"github.com/ordersink/orders-consumer/testbed/hostemu"
)

// RoundTripRow is the cost of one kind of message, counted at the Cosmos
// client's HTTP transport.
type RoundTripRow struct {
	Scenario string
	Messages int
	Want     string  // the outcome every message must get
	Floor    float64 // the fewest requests per message the design allows
	Outcomes Outcomes
	Counts   Counts
}

// PerMessage is the document requests (metadata excluded) per message.
func (r RoundTripRow) PerMessage() float64 { return float64(r.Counts.Item()) / float64(r.Messages) }

// offFloor marks, in a table, a row in which not every message got the
// wanted outcome or whose requests are not the ones the design allows.
func (r RoundTripRow) offFloor() string {
	if !r.Outcomes.Only(r.Want, r.Messages) || r.PerMessage() != r.Floor {
		return " **(off the floor)**"
	}
	return ""
}

// RoundTripReport is the result of RoundTrips.
type RoundTripReport struct {
	// First is what the first message on a fresh client cost: the SDK's
	// one-time account and metadata reads plus the message's own requests.
	First Counts
	Rows  []RoundTripRow
}

// RoundTrips sends n messages of each kind through the handler, one at a
// time, and counts the requests each kind costs after a one-message warm-up.
// The batch rows use one ProcessOrderBatch invocation of batchSize messages.
func RoundTrips(t Target, n, batchSize int) (*RoundTripReport, error) {
	rig, err := NewRig(t, 0)
	if err != nil {
		return nil, err
	}
	run := RunID()
	// The first request reads the account (regions) first.
	if err := rig.deliver(newOrder("RT-" + run + "-warm")); err != nil {
		return nil, err
	}
	rep := &RoundTripReport{First: rig.Counter.Snapshot()}
	rig.Outcomes.Take()
	single := func(deliveries func(id string) hostemu.Delivery) func() error {
		return func() error {
			for i := range n {
				if err := rig.deliver(deliveries(fmt.Sprintf("RT-%s-%04d", run, i))); err != nil {
					return err
				}
			}
			return nil
		}
	}
	batch := batchStep(rig, run, batchSize)
	steps := []struct {
		name  string
		want  string
		floor float64
		msgs  int
		do    func() error
	}{
		{"new order", "created", 1, n, single(newOrder)},
		{"duplicate (same content)", "duplicate", 2, n, single(newOrder)},
		{"mismatch (same orderId, other content)", "mismatch", 3, n, single(otherContent)},
		{"status change, first for the order", "applied", 1, n, single(statusChange("Paid", 1))},
		{"status change, newer version", "applied", 3, n, single(statusChange("Shipped", 2))},
		{"status change, repeated or older", "stale", 2, n, single(statusChange("Shipped", 2))},
		{fmt.Sprintf("batch invocation, %d new orders", batchSize), "created", 1, batchSize, batch},
		{fmt.Sprintf("batch invocation, the same %d again", batchSize), "duplicate", 2, batchSize, batch},
	}
	for _, s := range steps {
		if err := s.do(); err != nil {
			return nil, fmt.Errorf("%s: %w", s.name, err)
		}
		rep.Rows = append(rep.Rows, RoundTripRow{Scenario: s.name, Messages: s.msgs, Want: s.want, Floor: s.floor,
			Outcomes: rig.Outcomes.Take(), Counts: rig.Counter.Snapshot()})
	}
	return rep, nil
}

// statusChange is the delivery of an OrderStatusChanged message to status
// at version.
func statusChange(status string, version int64) func(id string) hostemu.Delivery {
	return func(id string) hostemu.Delivery {
		return delivery(StatusBody(id, status, version), fmt.Sprintf("%s:status:%d", id, version), "OrderStatusChanged")
	}
}

// otherContent is a new order's delivery with another customer: under an
// id already stored, a mismatch.
func otherContent(id string) hostemu.Delivery { return delivery(OrderBody(id, "CUST-2"), id, "") }

// batchStep returns a step sending one ProcessOrderBatch invocation of the
// same size new orders each time.
func batchStep(rig *Rig, run string, size int) func() error {
	ds := make([]hostemu.Delivery, size)
	for i := range ds {
		ds[i] = newOrder(fmt.Sprintf("RB-%s-%04d", run, i))
	}
	return func() error {
		req, err := BatchInvocation(ds)
		if err != nil {
			return err
		}
		return rig.Invoke(handler.FunctionProcessOrderBatch, req)
	}
}
