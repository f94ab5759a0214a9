package cosmos_test

import (
	"os"
	"testing"

	"github.com/ordersink/orders-consumer/cosmos/cosmostest"
	"github.com/ordersink/orders-consumer/orders/orderstest"
)

// The integration tests of this package share one Cosmos endpoint, started on
// first use so that the unit tests need none.
var cosmosDB = cosmostest.NewShared("cosmos")

func TestMain(m *testing.M) { os.Exit(cosmosDB.Main(m)) }

// TestStoreSuite runs the suite that orderstest.MemStore passes too, so the
// handler tests that run on MemStore say something about Cosmos DB: create
// as the claim, the fingerprint on 409, the all-or-nothing acceptance batch
// (rolled back only by a real account or Microsoft's emulator), the 2 MB
// limit, conditional status writes.
func TestStoreSuite(t *testing.T) {
	e := cosmosDB.Env(t)
	orderstest.TestStore(t, orderstest.Features{AtomicBatches: !e.LocalEmulator}, func(*testing.T) orderstest.Backend {
		return e.Store
	})
}
