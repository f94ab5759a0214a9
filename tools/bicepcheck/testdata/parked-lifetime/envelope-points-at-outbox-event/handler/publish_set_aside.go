package handler

import (
	"encoding/json"
	"time"

	"github.com/ordersink/orders-consumer/orders"
)

// setAside is the parking envelope of a change-feed document the publisher
// can never send. The document stays in the orders container (outbox events
// live 30 days, longer than the parking queue keeps the envelope), so when it
// is too large to carry, the envelope points to it instead of copying it.
func (cfg Config) setAside(doc []byte, cause error, invocationID string) *ParkingEnvelope {
	var head struct {
		ID      string `json:"id"`
		OrderID string `json:"orderId"`
		EventID string `json:"eventId"`
	}
	_ = json.Unmarshal(doc, &head)
	e := &ParkingEnvelope{
		Reason: orders.Unpublishable, Description: clip("the outbox event cannot be published: " + cause.Error()),
		OrderID: clip(head.OrderID), MessageID: clip(head.EventID),
		ParkedAt: cfg.Now().UTC().Truncate(100 * time.Nanosecond), Function: FunctionPublishOrderEvents, InvocationID: invocationID,
	}
	e.setBody(doc)
	if cfg.fitOutput(e) != nil {
		e.Body, e.BodyEncoding = "", ""
		e.BodyRef = &BodyRef{ID: clip(head.ID), PartitionKey: e.OrderID}
	}
	return e
}
