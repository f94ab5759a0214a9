package bench

import (
	"fmt"
	"os"
	"testing"

	"github.com/ordersink/orders-consumer/internal/cosmostest"
)

var env *cosmostest.Env

func TestMain(m *testing.M) {
	var err error
	env, err = cosmostest.Start("bench")
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench tests need Cosmos DB:", err)
		os.Exit(1)
	}
	code := m.Run()
	env.Close()
	os.Exit(code)
}

func target() Target {
	return Target{Endpoint: env.Endpoint, Key: env.Key, Database: env.Database, Container: env.Container}
}
