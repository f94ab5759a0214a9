package localrun

import (
	"github.com/ordersink/orders-consumer/testbed/hostemu"
	"github.com/ordersink/orders-consumer/testbed/orderstream"
)

// Parking reasons of docs/contract.md §6.
const (
	reasonHashMismatch = "HashMismatch"
	reasonValidation   = "ValidationFailed"
	reasonMalformed    = "MalformedMessage"
	reasonExhausted    = "RetryBudgetExhausted"
)

// count works out the summary's figures from the stream, the invocations and
// the stored orders. It judges nothing: the rules are make chaos's
// (chaos.Judge), and the run prints their verdicts beside these figures.
func (r *Report) count(msgs []*hostemu.Message, invs []*hostemu.Invocation, stored []storedOrder, dls []hostemu.DeadLetter) {
	classes := make(map[*hostemu.Message]orderstream.Class, len(msgs))
	valid := map[string]bool{}
	for _, m := range msgs {
		c := orderstream.Classify(m)
		classes[m] = c
		if c.Valid {
			valid[c.OrderID] = true
		}
	}
	r.DistinctValidOrders = len(valid)
	storedHash := map[string]string{}
	for _, o := range stored {
		storedHash[o.OrderID] = o.RequestHash
	}
	r.StoredOrders = len(storedHash)
	for _, inv := range invs {
		r.Invocations++
		for i, d := range inv.Deliveries {
			if d.DeliveryCount > 1 {
				r.Redeliveries++
			}
			if inv.Settlements[i] == hostemu.CompletionLost {
				r.LostCompletions++
			}
		}
		if !inv.OK() {
			r.FailedInvocations++
			if inv.Protocol {
				r.ProtocolErrors++
			}
			continue
		}
		r.countInvocation(inv, classes, storedHash)
	}
	r.DeadLetters = len(dls)
	r.CreatedOrders = len(stored)
	r.DuplicatesAbsorbed = r.storedContentDeliveries - r.StoredOrders
}

// countInvocation books one successful invocation's deliveries by what their
// content is, and its parking envelopes by reason.
func (r *Report) countInvocation(inv *hostemu.Invocation, classes map[*hostemu.Message]orderstream.Class, storedHash map[string]string) {
	for _, d := range inv.Deliveries {
		c, ok := classes[d.Message]
		if given, isGiven := orderstream.Unwrap(d.Message); !ok && isGiven {
			c = orderstream.Classify(given) // an order SubmitOrder or a batch put on the queue
		}
		switch {
		case c.OtherType:
			r.OtherTypeDeliveries++
		case !c.Valid:
			r.InvalidDeliveries++
		case storedHash[c.OrderID] == c.Content:
			r.storedContentDeliveries++
		case storedHash[c.OrderID] != "":
			r.MismatchDeliveries++
		}
	}
	for _, o := range inv.Outputs {
		if o.Entity != r.ParkingQueue || o.ContentType == "" {
			continue
		}
		env, err := orderstream.ParseEnvelope(o.Text)
		if err != nil {
			continue // the checks name it: a parked message must be an envelope
		}
		switch env.Reason {
		case reasonHashMismatch:
			r.MismatchesParked++
		case reasonValidation, reasonMalformed:
			r.InvalidParked++
		case reasonExhausted:
			r.ExhaustedParked++
		}
	}
}
