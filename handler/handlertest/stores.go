package handlertest

import (
	"testing"

	"github.com/ordersink/orders-consumer/cosmos/cosmostest"
	"github.com/ordersink/orders-consumer/orders/orderstest"
)

// Stores are the stores of one test binary: Cosmos DB (COSMOS_ENDPOINT when
// set, a real account or Microsoft's emulator, else a local emulator),
// started by the first test that needs it; or with -short one
// orderstest.MemStore for the whole binary, which passes the same store
// suite (orderstest.TestStore, run on both in orders/orderstest and cosmos).
type Stores struct {
	cosmos *cosmostest.Shared
	mem    *orderstest.MemStore
}

// NewStores returns the Stores of a test binary; the name goes into the
// database's.
func NewStores(name string) *Stores {
	return &Stores{cosmos: cosmostest.NewShared(name), mem: orderstest.NewMemStore()}
}

// Main runs the tests and then closes Cosmos DB if one was started. Call it
// from TestMain as os.Exit(stores.Main(m)).
func (s *Stores) Main(m *testing.M) int { return s.cosmos.Main(m) }

// Cosmos is Cosmos DB itself, for the tests about Cosmos DB (round trips,
// the SDK's requests); with -short they are skipped.
func (s *Stores) Cosmos(t testing.TB) *cosmostest.Env { return s.cosmos.Env(t) }

// Orders is the store behind the handler: Cosmos DB, or the MemStore with
// -short.
func (s *Stores) Orders(t testing.TB) Store {
	t.Helper()
	if testing.Short() {
		return s.mem
	}
	return s.cosmos.Env(t).Readable()
}
