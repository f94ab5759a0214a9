package verify

import (
	"fmt"
	"time"

	"github.com/ordersink/orders-consumer/testbed/faults"
	"github.com/ordersink/orders-consumer/testbed/hostemu"
	"github.com/ordersink/orders-consumer/testbed/orderstream"
)

// DefaultRecoveryBound is how soon after Cosmos answers again the consumer
// must create orders (issue 9: work again within 5 s).
const DefaultRecoveryBound = 5 * time.Second

// Recovery is how the consumer rode out one outage.
type Recovery struct {
	faults.OutageRecord
	// HeldDeliveries are the deliveries of valid messages in flight while
	// Cosmos was out (the invocations the consumer held; duplicates of
	// orders created before included). Held are their orderIds not created
	// before it went out: the orders the outage kept waiting.
	HeldDeliveries, Held int
	// HeldCreated of them were created by the end of the run; HeldGivenUp
	// have a message parked RetryBudgetExhausted or dead-lettered.
	HeldCreated, HeldGivenUp int
	// FirstCreate is from Cosmos answering again to the first order
	// created after it; LastHeldCreate to the last held order created.
	// Negative when there was none.
	FirstCreate, LastHeldCreate time.Duration
}

// Span is when one delivery's invocation ran.
type Span struct{ Start, End time.Time }

// measureRecovery reads one outage's figures from when each orderId was
// first created (createdAt), when its valid messages' deliveries ran
// (delivered) and which orderIds had a message given up on.
func measureRecovery(o faults.OutageRecord, createdAt map[string]time.Time, delivered map[string][]Span, givenUp map[string]bool) Recovery {
	r := Recovery{OutageRecord: o, FirstCreate: -1, LastHeldCreate: -1}
	for _, at := range createdAt {
		if d := at.Sub(o.End); !at.Before(o.End) && (r.FirstCreate < 0 || d < r.FirstCreate) {
			r.FirstCreate = d
		}
	}
	for id, spans := range delivered {
		n := overlapping(spans, o.Start, o.End)
		r.HeldDeliveries += n
		at, created := createdAt[id]
		if (created && at.Before(o.Start)) || n == 0 {
			continue
		}
		r.Held++
		if givenUp[id] {
			r.HeldGivenUp++
		}
		if created {
			r.HeldCreated++
			r.LastHeldCreate = max(r.LastHeldCreate, at.Sub(o.End))
		}
	}
	return r
}

// overlapping counts the spans that overlap [from, to).
func overlapping(spans []Span, from, to time.Time) int {
	n := 0
	for _, s := range spans {
		if s.Start.Before(to) && s.End.After(from) {
			n++
		}
	}
	return n
}

// incidentChecks are the checks an ordinary incident must pass, shared by
// make run and make chaos: no good order parked or dead-lettered (the
// faults and outages of a run are all ordinary), and, when the run had
// outages, orders created again within bound of each one's end (createdAt:
// the proxy ledger's first create per orderId). It also returns each
// outage's figures.
func incidentChecks(msgs []*hostemu.Message, fates *Tracker, outages []faults.OutageRecord, createdAt map[string]time.Time, bound time.Duration) ([]*Check, []Recovery) {
	parked := &Check{Name: "no valid order parked RetryBudgetExhausted or dead-lettered"}
	givenUp := map[string]bool{}
	delivered := map[string][]Span{}
	for _, m := range msgs {
		cl := orderstream.Classify(m)
		fa := fates.fateOf(m)
		if !cl.Valid || fa == nil {
			continue
		}
		parked.Checked++
		delivered[cl.OrderID] = append(delivered[cl.OrderID], fa.spans...)
		switch {
		case fa.final == hostemu.DeadLettered:
			givenUp[cl.OrderID] = true
			parked.Fail("valid message %s (order %s) was dead-lettered after %d deliveries: %s", m.MessageID, cl.OrderID, fa.deliveries, fa.lastFailure)
		case fa.finalParked != nil && fa.finalParked.Reason == "RetryBudgetExhausted":
			givenUp[cl.OrderID] = true
			parked.Fail("valid message %s (order %s) was parked RetryBudgetExhausted at delivery %d", m.MessageID, cl.OrderID, fa.finalParked.DeliveryCount)
		}
	}
	if len(outages) == 0 {
		return []*Check{parked}, nil
	}
	recovered := &Check{Name: fmt.Sprintf("orders created again within %s of Cosmos answering after each outage", bound)}
	var recs []Recovery
	for _, o := range outages {
		r := measureRecovery(o, createdAt, delivered, givenUp)
		recs = append(recs, r)
		recovered.Checked++
		switch {
		case r.FirstCreate < 0:
			recovered.Fail("%s outage ending %s: no order was created after it", o.Kind, o.End.Format(time.TimeOnly))
		case r.FirstCreate > bound:
			recovered.Fail("%s outage: the first order was created %s after Cosmos answered again", o.Kind, r.FirstCreate.Round(time.Millisecond))
		}
	}
	return []*Check{parked, recovered}, recs
}

// String is the outage's line in a report.
func (r Recovery) String() string {
	since := func(d time.Duration) string {
		if d < 0 {
			return "none"
		}
		return "+" + d.Round(10*time.Millisecond).String()
	}
	return fmt.Sprintf("Cosmos %s for %s: the consumer held %d deliveries, of %d orders not yet created (%d created since, %d given up on); after Cosmos answered again: first order created %s, last held order created %s",
		r.Kind, r.End.Sub(r.Start).Round(100*time.Millisecond), r.HeldDeliveries, r.Held, r.HeldCreated, r.HeldGivenUp, since(r.FirstCreate), since(r.LastHeldCreate))
}

// clockCheck is the platform-clock rule shared by make run and make chaos:
// every invocation answered within the clocks it lives under, so no lock
// expired under it (a batch past the queue's lock, a single message past
// its renewals) and no invocation passed functionTimeout (which restarts
// the handler and fails every invocation in flight). checked is the number
// of invocations.
func clockCheck(checked int, q hostemu.QueueCounts, w hostemu.WorkerStats) *Check {
	c := &Check{Name: "every invocation answered within the platform's clocks (lock, functionTimeout)", Checked: checked}
	if q.ExpiredLocks > 0 {
		c.Fail("%d deliveries lost their lock before the invocation answered; each came back with DeliveryCount+1", q.ExpiredLocks)
	}
	if w.TimeoutRestarts > 0 {
		c.Fail("%d invocations passed functionTimeout; the host restarted the handler each time", w.TimeoutRestarts)
	}
	return c
}
