package cosmos_test

import (
	"testing"

	"github.com/ordersink/orders-consumer/idempotency/idemtest"
)

// TestKeyStoreFindByOrderID runs on Cosmos DB what idemtest.MemStore passes:
// GetOrder's lookup of a submission by orderId, across partitions.
func TestKeyStoreFindByOrderID(t *testing.T) {
	idemtest.TestFinder(t, testEnv(t).Keys)
}
