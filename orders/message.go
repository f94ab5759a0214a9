package orders

import "strings"

// MessageType tells apart the kinds of message on the orders queue. Producers
// set it as the Service Bus Subject (the host hands it over as metadata, so
// the body needs no type member, and order bodies stay as contract §3 has
// them); a message without a Subject is an order.
type MessageType string

// The message types of the orders queue.
const (
	OrderPlaced        MessageType = "OrderPlaced"
	OrderStatusChanged MessageType = "OrderStatusChanged"
)

// ParseMessageType maps a Subject to a MessageType: empty means OrderPlaced,
// case is ignored, and any other value is a *RejectError (ValidationFailed),
// so a message meant for another consumer is parked, not read as an order.
func ParseMessageType(subject string) (MessageType, error) {
	s := strings.TrimSpace(subject)
	switch {
	case s == "" || strings.EqualFold(s, string(OrderPlaced)):
		return OrderPlaced, nil
	case strings.EqualFold(s, string(OrderStatusChanged)):
		return OrderStatusChanged, nil
	}
	return "", invalid("Subject", "names the message type; %q is not one of %q (or none, for an order), %q",
		truncate(subject, 40), OrderPlaced, OrderStatusChanged)
}
