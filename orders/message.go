package orders

import "strings"

// MessageType tells apart the kinds of message on the orders queue. Producers
// of status changes set it as the Service Bus Subject (the host hands it over
// as metadata, so the body needs no type member, and order bodies stay as
// docs/contract.md §3 has them).
type MessageType string

// The message types of the orders queue.
const (
	OrderPlaced        MessageType = "OrderPlaced"
	OrderStatusChanged MessageType = "OrderStatusChanged"
)

// ParseMessageType maps a Subject to a MessageType: OrderStatusChanged (case
// ignored) is a status change, and anything else is an order. The contract
// does not constrain the Subject of orders, so producers may use it for their
// own routing ("order.created"); a body meant for another consumer fails the
// order rules and is parked by them.
func ParseMessageType(subject string) MessageType {
	if strings.EqualFold(strings.TrimSpace(subject), string(OrderStatusChanged)) {
		return OrderStatusChanged
	}
	return OrderPlaced
}
