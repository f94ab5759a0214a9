package bench

import (
	"os"
	"testing"

	"github.com/ordersink/orders-consumer/cosmos/cosmostest"
)

// cosmosDB is the endpoint of the tests that write: COSMOS_ENDPOINT when set,
// else a local emulator, started by the first test that needs it.
var cosmosDB = cosmostest.NewShared("bench")

func TestMain(m *testing.M) { os.Exit(cosmosDB.Main(m)) }

func target(t testing.TB) Target {
	env := cosmosDB.Env(t)
	return Target{Endpoint: env.Endpoint, Key: env.Key, Database: env.Database, Container: env.Container}
}
