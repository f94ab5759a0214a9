package handler

import (
	"context"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/ordersink/orders-consumer/orders"
)

// BodyStore keeps the bodies of parked messages whose envelope cannot carry
// them (docs/contract.md §6).
type BodyStore interface {
	ParkBody(ctx context.Context, p orders.ParkedBody) error
}

// BodyRef points to a parked body kept in the orders container.
type BodyRef struct {
	ID           string `json:"id"`
	PartitionKey string `json:"partitionKey"`
}

// maxEnvelopeText bounds the description and orderId of an envelope whose
// body is kept elsewhere: a body that is too large may also carry an orderId
// of any length, which the description can quote.
const maxEnvelopeText = 1024

// park builds the envelope of a parked delivery. When the envelope would not
// fit one message, the body goes to the body store and the envelope points to
// it; when that fails, the result becomes Transient, so the message stays
// whole in the broker and is retried.
func (cfg Config) park(ctx context.Context, d delivery, res orders.Result, now time.Time) (*ParkingEnvelope, orders.Result) {
	e := d.envelope(res, now)
	err := cfg.fitOutput(e)
	if err == nil {
		return e, res
	}
	if err = cfg.keepBody(ctx, e, d.body); err == nil {
		return e, res
	}
	return nil, orders.Result{Outcome: orders.Transient, OrderID: res.OrderID, Kind: res.Kind,
		Description: fmt.Sprintf("park message %s as %s: %v", d.messageID, res.Reason, err),
		Err:         fmt.Errorf("park message %s: %w", d.messageID, err)}
}

// keepBody stores body, the body of e, as a parked body (which never
// expires, like the envelope) and slims e to point at it and fit one
// message. Every envelope that cannot carry its body comes through here, so
// a bodyRef only ever names a parked body.
func (cfg Config) keepBody(ctx context.Context, e *ParkingEnvelope, body []byte) error {
	if cfg.Bodies == nil {
		return fmt.Errorf("its envelope is too large and no body store is configured")
	}
	p := orders.NewParkedBody(body, e.OrderID, e.MessageID, e.Reason, e.ParkedAt)
	if err := cfg.Bodies.ParkBody(ctx, p); err != nil {
		return err
	}
	e.Body, e.BodyEncoding = "", ""
	e.BodyRef = &BodyRef{ID: p.ID(), PartitionKey: p.PartitionKey}
	e.OrderID = Clip(e.OrderID)
	e.Description = Clip(e.Description)
	if err := cfg.fitOutput(e); err != nil {
		return fmt.Errorf("its envelope without the body is still %w", err)
	}
	return nil
}

// Clip cuts s to maxEnvelopeText runes, marking the cut: a caller's value
// (an orderId, a description quoting one) of any length as an envelope or a
// log line keeps it.
func Clip(s string) string {
	if utf8.RuneCountInString(s) <= maxEnvelopeText {
		return s
	}
	return string([]rune(s)[:maxEnvelopeText]) + "…"
}

// parkBatch builds the envelope of every parked message of a batch (nil for
// the others); a message whose body could not be kept becomes Transient, and
// the batch is then redelivered. The host sends each element of the parking
// array as a message of its own, so each envelope has the whole budget.
func (cfg Config) parkBatch(ctx context.Context, ds []delivery, results []batchResult) []*ParkingEnvelope {
	envelopes := make([]*ParkingEnvelope, len(ds))
	now := cfg.Now()
	for i, d := range ds {
		if results[i].res.Outcome.Parks() {
			envelopes[i], results[i].res = cfg.park(ctx, d, results[i].res, now)
		}
	}
	return envelopes
}
