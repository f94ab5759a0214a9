package handler

import (
	"fmt"
	"os"
	"testing"

	"github.com/ordersink/orders-consumer/internal/cosmostest"
)

// env is the Cosmos endpoint of the integration tests: COSMOS_ENDPOINT when
// set (a real account or Microsoft's emulator), else a local emulator.
var env *cosmostest.Env

func TestMain(m *testing.M) {
	var err error
	env, err = cosmostest.Start("handler")
	if err != nil {
		fmt.Fprintln(os.Stderr, "handler tests need Cosmos DB:", err)
		os.Exit(1)
	}
	code := m.Run()
	env.Close()
	os.Exit(code)
}
