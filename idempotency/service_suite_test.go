package idempotency_test

import (
	"testing"

	"github.com/ordersink/orders-consumer/idempotency/idemtest"
)

// The service suite runs here, beside the code it judges, so that the
// package's own tests are what `make mutate` measures it by; cosmos runs it
// again over Cosmos DB (cosmos.TestKeyStoreService).
func TestServiceOnMemStore(t *testing.T) {
	idemtest.TestService(t, func(*testing.T) idemtest.Backend { return idemtest.NewMemStore() })
}
