package orderstream

import (
	"github.com/ordersink/orders-consumer/orders"
	"github.com/ordersink/orders-consumer/testbed/hostemu"
)

// Class is what a message amounts to for the consumer, decided by the
// domain's own rules so that the check and the handler cannot disagree on
// what "valid" means.
type Class struct {
	// Valid: an order (no Subject, or OrderPlaced) the consumer must store.
	Valid bool
	// OtherType: a valid Subject naming another message type (a status
	// change); the orders check leaves it alone.
	OtherType bool
	OrderID   string // "" when the body has none
	// Content identifies the body's content: the docs/contract.md §4 fingerprint
	// (meta, key order and white space do not count) when there is one,
	// otherwise the text itself.
	Content string
}

// DistinctOrders is the number of distinct valid orderIds among msgs.
func DistinctOrders(msgs []*hostemu.Message) int {
	valid := map[string]bool{}
	for _, m := range msgs {
		if c := Classify(m); c.Valid {
			valid[c.OrderID] = true
		}
	}
	return len(valid)
}

// Classify decides whether a message is a valid order, by its Subject (the
// message type) and its body, and names its content. The handler's rule
// against body members that shadow metadata applies only where the host
// copies them (a string-typed single trigger); ProcessOrder binds binary
// and batches copy nothing, so it never applies.
func Classify(m *hostemu.Message) Class {
	c := Class{OrderID: orders.PeekOrderID(m.Body), Content: ContentKey(m.Body)}
	if orders.ParseMessageType(m.Subject) != orders.OrderPlaced {
		c.OtherType = true
		return c
	}
	if o, err := orders.ParseOrder(m.Body); err == nil {
		c.OrderID, c.Valid = o.ID, true
	}
	return c
}

// ContentKey is the fingerprint of a body, or "text:" and the body when it
// has none (not a JSON object).
func ContentKey(body []byte) string {
	if h, err := orders.Fingerprint(body, orders.HashVersion); err == nil {
		return h
	}
	return "text:" + string(body)
}
