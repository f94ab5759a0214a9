package cosmos

import (
	"testing"

	"github.com/ordersink/orders-consumer/orders/orderstest"
)

// TestMemStoreRefusesWhatCosmosRefuses: the in-memory store imports no Azure,
// so it restates Cosmos DB's transactional batch limit; this keeps the two one
// number.
func TestMemStoreRefusesWhatCosmosRefuses(t *testing.T) {
	if orderstest.MaxBatchBytes != MaxBatchBytes {
		t.Errorf("orderstest.MaxBatchBytes %d, cosmos.MaxBatchBytes %d: the handler tests on MemStore would accept batches Cosmos DB refuses, or refuse ones it takes", orderstest.MaxBatchBytes, MaxBatchBytes)
	}
}
