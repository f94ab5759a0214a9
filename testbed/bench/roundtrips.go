package bench

import (
	"fmt"

	"github.com/ordersink/orders-consumer/handler"
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

// OK reports whether every message got the wanted outcome.
func (r RoundTripRow) OK() bool { return r.Outcomes.Only(r.Want, r.Messages) }

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
	rig, err := NewRig(t, PoolSize, 0)
	if err != nil {
		return nil, err
	}
	run := RunID()
	rep := &RoundTripReport{}

	if rep.First, err = warmUp(rig, run); err != nil {
		return nil, err
	}
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("RT-%s-%04d", run, i)
	}
	single := func(body func(id string) []byte, subject string, msgID func(id string) string) func() error {
		return func() error {
			for _, id := range ids {
				req, err := SingleInvocation(Delivery{Body: body(id), MessageID: msgID(id), DeliveryCount: 1, Subject: subject})
				if err != nil {
					return err
				}
				if _, err := rig.Invoke(handler.FunctionProcessOrder, req); err != nil {
					return err
				}
			}
			return nil
		}
	}
	same := func(id string) string { return id }
	statusID := func(v int64) func(string) string {
		return func(id string) string { return fmt.Sprintf("%s:status:%d", id, v) }
	}
	status := func(s string, v int64) func(string) []byte {
		return func(id string) []byte { return StatusBody(id, s, v) }
	}
	batch := batchStep(rig, run, batchSize)

	steps := []struct {
		name  string
		want  string
		floor float64
		msgs  int
		do    func() error
	}{
		{"new order", "created", 1, n, single(func(id string) []byte { return OrderBody(id, "CUST-1") }, "", same)},
		{"duplicate (same content)", "duplicate", 2, n, single(func(id string) []byte { return OrderBody(id, "CUST-1") }, "", same)},
		{"mismatch (same orderId, other content)", "mismatch", 3, n, single(func(id string) []byte { return OrderBody(id, "CUST-2") }, "", same)},
		{"status change, first for the order", "applied", 1, n, single(status("Paid", 1), "OrderStatusChanged", statusID(1))},
		{"status change, newer version", "applied", 3, n, single(status("Shipped", 2), "OrderStatusChanged", statusID(2))},
		{"status change, repeated or older", "stale", 2, n, single(status("Shipped", 2), "OrderStatusChanged", statusID(2))},
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

// warmUp sends one message: the first request reads the account (regions)
// first. It returns what that cost.
func warmUp(rig *Rig, run string) (Counts, error) {
	warm, err := SingleInvocation(Delivery{Body: OrderBody("RT-"+run+"-warm", "CUST-1"), MessageID: "RT-" + run + "-warm", DeliveryCount: 1})
	if err != nil {
		return Counts{}, err
	}
	if _, err := rig.Invoke(handler.FunctionProcessOrder, warm); err != nil {
		return Counts{}, err
	}
	first := rig.Counter.Snapshot()
	rig.Outcomes.Take()
	return first, nil
}

// batchStep returns a step sending one ProcessOrderBatch invocation of the
// same size new orders each time.
func batchStep(rig *Rig, run string, size int) func() error {
	batchIDs := make([]string, size)
	for i := range batchIDs {
		batchIDs[i] = fmt.Sprintf("RB-%s-%04d", run, i)
	}
	return func() error {
		ds := make([]Delivery, len(batchIDs))
		for i, id := range batchIDs {
			ds[i] = Delivery{Body: OrderBody(id, "CUST-1"), MessageID: id, DeliveryCount: 1}
		}
		req, err := BatchInvocation(ds)
		if err != nil {
			return err
		}
		_, err = rig.Invoke(handler.FunctionProcessOrderBatch, req)
		return err
	}
}
