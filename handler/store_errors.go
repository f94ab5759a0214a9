package handler

import (
	"errors"

	"github.com/ordersink/orders-consumer/idempotency"
	"github.com/ordersink/orders-consumer/orders"
)

// A request of the HTTP API meets two stores: the key store of its
// Idempotency-Key and the orders store its work writes to. Each says in its
// own StoreError whether a retry may help and what the store answered; an
// error carries at most one of them.

// transient reports whether a retry may succeed: the verdict of the store
// error in err, either store's; any other error counts as transient (when
// in doubt, the caller retries rather than giving up).
func transient(err error) bool {
	var ke *idempotency.StoreError
	if errors.As(err, &ke) {
		return ke.Transient
	}
	return orders.IsTransient(err)
}

// storeStatus is the status and sub-status the store in err answered, 0
// when it gave no answer or err is not a store's.
func storeStatus(err error) (status, subStatus int) {
	var ke *idempotency.StoreError
	if errors.As(err, &ke) {
		return ke.Status, ke.SubStatus
	}
	var se *orders.StoreError
	if errors.As(err, &se) {
		return se.Status, se.SubStatus
	}
	return 0, 0
}
