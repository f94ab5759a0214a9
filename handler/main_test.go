package handler

import (
	"os"
	"testing"

	"github.com/ordersink/orders-consumer/internal/cosmostest"
)

// cosmosDB is the Cosmos endpoint of the integration tests: COSMOS_ENDPOINT
// when set (a real account or Microsoft's emulator), else a local emulator,
// started by the first test that needs it.
var cosmosDB = cosmostest.NewShared("handler")

func TestMain(m *testing.M) { os.Exit(cosmosDB.Main(m)) }

func testEnv(t testing.TB) *cosmostest.Env { return cosmosDB.Env(t) }
