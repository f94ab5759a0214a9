package idemtest_test

import (
	"testing"

	"github.com/ordersink/orders-consumer/idempotency/idemtest"
)

func TestMemStoreFindByOrderID(t *testing.T) {
	idemtest.TestFinder(t, idemtest.NewMemStore())
}
