package handler

import (
	"testing"

	"github.com/ordersink/orders-consumer/idempotency/idemtest"
)

// cosmosKeyStore is the key store of the tests that run on Cosmos DB.
// Until cosmos.KeyStore lands (branch idem), the keys are kept in memory
// while the orders go to Cosmos DB.
func cosmosKeyStore(t testing.TB) keyStore {
	t.Helper()
	return idemtest.NewMemStore()
}
