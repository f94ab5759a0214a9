package orderstest_test

import (
	"testing"

	"github.com/ordersink/orders-consumer/orders/orderstest"
)

func TestMemStore(t *testing.T) {
	orderstest.TestStore(t, orderstest.Features{AtomicBatches: true}, func(*testing.T) orderstest.Backend {
		return orderstest.NewMemStore()
	})
}
