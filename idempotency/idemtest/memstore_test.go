package idemtest_test

import (
	"testing"

	"github.com/ordersink/orders-consumer/idempotency/idemtest"
)

func TestMemStore(t *testing.T) {
	idemtest.TestStore(t, idemtest.Features{ReadOfMissingIsNotFound: true}, func(*testing.T) idemtest.Backend { return idemtest.NewMemStore() })
}
