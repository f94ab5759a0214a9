package handler

import (
	"os"
	"testing"

	"github.com/ordersink/orders-consumer/handler/handlertest"
	"github.com/ordersink/orders-consumer/internal/cosmostest"
	"github.com/ordersink/orders-consumer/orders/orderstest"
)

// cosmosDB is the Cosmos endpoint of the integration tests: COSMOS_ENDPOINT
// when set (a real account or Microsoft's emulator), else a local emulator,
// started by the first test that needs it.
var cosmosDB = cosmostest.NewShared("handler")

func TestMain(m *testing.M) { os.Exit(cosmosDB.Main(m)) }

// testEnv is Cosmos DB itself, for the tests about Cosmos DB (round trips,
// the SDK's requests); with -short they are skipped.
func testEnv(t testing.TB) *cosmostest.Env { return cosmosDB.Env(t) }

// memStore is the store of the whole test binary under -short.
var memStore = orderstest.NewMemStore()

// testStore is the store behind the handler: Cosmos DB, or with -short
// orderstest.MemStore, which passes the same store suite
// (orderstest.TestStore, run on both in orders/orderstest and cosmos).
func testStore(t testing.TB) handlertest.Store {
	t.Helper()
	if testing.Short() {
		return memStore
	}
	return cosmosDB.Env(t).Readable()
}
