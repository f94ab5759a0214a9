package httpapi

import (
	"errors"

	"github.com/ordersink/orders-consumer/idempotency"
	"github.com/ordersink/orders-consumer/orders"
)

// storeFailure is what the handler asks of a store's error. A request of
// the HTTP API meets two stores, the key store of its Idempotency-Key and the
// orders store its work writes to; both errors answer it, so the handler
// asks the behaviour once (orders.IsTransient for the answer) and never
// which store failed. An error carries at most one of them.
type storeFailure interface {
	Transient() bool
	StoreStatus() (status, subStatus int)
}

var (
	_ storeFailure = (*orders.StoreError)(nil)
	_ storeFailure = (*idempotency.KeyStoreError)(nil)
)

// storeStatus is the status and sub-status the store in err answered, 0
// when it gave no answer or err is not a store's.
func storeStatus(err error) (status, subStatus int) {
	var f storeFailure
	if errors.As(err, &f) {
		return f.StoreStatus()
	}
	return 0, 0
}
