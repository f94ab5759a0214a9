package cosmos

import "github.com/ordersink/orders-consumer/idempotency"

// classifyKey is classify for the key store: its errors name the key
// record, not an order.
func classifyKey(op, id string, err error) error {
	f := failureOf(err)
	return &idempotency.KeyStoreError{Op: op, Key: id, Status: f.status, SubStatus: f.subStatus, IsTransient: f.transient, Err: f.err}
}
