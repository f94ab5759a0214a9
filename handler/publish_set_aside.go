package handler

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/ordersink/orders-consumer/orders"
)

// setAside is the parking envelope of a change-feed document the publisher
// can never send. When the document is too large to carry, it is kept as a
// parked body, as ProcessOrder keeps a body too large for its envelope: the
// outbox document itself expires (orders.OutboxEventTTL), the envelope never
// does, so the envelope must point at a copy that lives until ordersctl
// settles it. The parked body is content-addressed, so a retry of the same
// batch writes the same documents; an error means it was not kept and the
// invocation must fail.
func (cfg Config) setAside(ctx context.Context, doc []byte, cause error, invocationID string) (*ParkingEnvelope, error) {
	var head struct {
		OrderID string `json:"orderId"`
		EventID string `json:"eventId"`
	}
	_ = json.Unmarshal(doc, &head)
	e := &ParkingEnvelope{
		Reason: orders.Unpublishable, Description: Clip("the outbox event cannot be published: " + cause.Error()),
		OrderID: Clip(head.OrderID), MessageID: Clip(head.EventID),
		ParkedAt: parkedAt(cfg.Now()), Function: FunctionPublishOrderEvents, InvocationID: invocationID,
	}
	e.setBody(doc)
	if cfg.fitOutput(e) == nil {
		return e, nil
	}
	if err := cfg.keepBody(ctx, e, doc); err != nil {
		return nil, fmt.Errorf("set aside outbox event %q of order %q: %w", e.MessageID, e.OrderID, err)
	}
	return e, nil
}
