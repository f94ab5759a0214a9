package cosmos

import "github.com/ordersink/orders-consumer/idempotency"

// classifyKey is classify for the key store: its errors name the key
// record, not an order.
func classifyKey(op, id string, err error) error {
	status := statusOf(err)
	return &idempotency.StoreError{Op: op, Key: id, Status: status, SubStatus: subStatusOf(err), Err: concise(err), Transient: isTransient(status)}
}
