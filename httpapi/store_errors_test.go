package httpapi

import (
	"errors"
	"fmt"
	"testing"

	"github.com/ordersink/orders-consumer/idempotency"
	"github.com/ordersink/orders-consumer/orders"
)

// TestStoreStatusOfEitherStore: the exchange's log line gets the status of
// whichever store failed, through the error's wrapping; none for an error
// that is no store's.
func TestStoreStatusOfEitherStore(t *testing.T) {
	for name, tc := range map[string]struct {
		err               error
		status, subStatus int
	}{
		"key store":    {fmt.Errorf("complete: %w", &idempotency.KeyStoreError{Op: "complete idempotency key", Key: "k1", Status: 429, SubStatus: 3200}), 429, 3200},
		"orders store": {fmt.Errorf("idempotency key k1: work: %w", &orders.StoreError{Op: "create order", OrderID: "ORD-1", Status: 403, SubStatus: 5301}), 403, 5301},
		"no answer":    {&orders.StoreError{Op: "create order", OrderID: "ORD-1", IsTransient: true}, 0, 0},
		"no store's":   {errors.New("boom"), 0, 0},
	} {
		if status, sub := storeStatus(tc.err); status != tc.status || sub != tc.subStatus {
			t.Errorf("%s: storeStatus = %d/%d, want %d/%d", name, status, sub, tc.status, tc.subStatus)
		}
	}
}
