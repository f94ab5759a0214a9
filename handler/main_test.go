package handler

import (
	"os"
	"testing"

	"github.com/ordersink/orders-consumer/cosmos/cosmostest"
	"github.com/ordersink/orders-consumer/handler/handlertest"
)

// stores are the test binary's: Cosmos DB, or with -short one in-memory
// store (handlertest.Stores).
var stores = handlertest.NewStores("handler")

func TestMain(m *testing.M) { os.Exit(stores.Main(m)) }

// testEnv is Cosmos DB itself; with -short its tests are skipped.
func testEnv(t testing.TB) *cosmostest.Env { return stores.Cosmos(t) }

// testStore is the store behind the handler.
func testStore(t testing.TB) handlertest.Store { return stores.Orders(t) }
