package orders_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/ordersink/orders-consumer/orders"
)

// keyStoreError stands for idempotency.KeyStoreError, which orders may not
// import: another type with a Transient method.
type keyStoreError struct{ transient bool }

func (e keyStoreError) Error() string   { return "claim idempotency key k1: 429" }
func (e keyStoreError) Transient() bool { return e.transient }

// TestIsTransientAsksTheBehaviour: IsTransient takes the answer of the
// first error in the chain with a Transient method, of whatever type; any
// other error counts as transient, so that a message is kept when in doubt.
func TestIsTransientAsksTheBehaviour(t *testing.T) {
	final := &orders.StoreError{Op: "create order", OrderID: "ORD-1", Status: 400, Err: errors.New("400 Bad Request")}
	for name, tc := range map[string]struct {
		err  error
		want bool
	}{
		"final store error":          {final, false},
		"transient store error":      {&orders.StoreError{Op: "create order", OrderID: "ORD-1", Status: 429, IsTransient: true}, true},
		"wrapped final store error":  {fmt.Errorf("submit: %w", final), false},
		"another store's, final":     {fmt.Errorf("execute: %w", keyStoreError{}), false},
		"another store's, transient": {keyStoreError{transient: true}, true},
		"no store's":                 {context.Canceled, true},
		"nil":                        {nil, true},
	} {
		if got := orders.IsTransient(tc.err); got != tc.want {
			t.Errorf("%s: IsTransient(%v) = %v, want %v", name, tc.err, got, tc.want)
		}
	}
	if status, sub := (&orders.StoreError{Status: 403, SubStatus: 5301}).StoreStatus(); status != 403 || sub != 5301 {
		t.Errorf("StoreStatus() = %d/%d, want 403/5301", status, sub)
	}
}
