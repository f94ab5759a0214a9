// Command cosmos-setup creates the database and containers the handler uses on
// a local emulator (or any account reached with a key). In Azure, Bicep
// creates them.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/ordersink/orders-consumer/cosmos"
)

func main() {
	endpoint := flag.String("endpoint", os.Getenv("COSMOS_ENDPOINT"), "account endpoint")
	database := flag.String("database", envOr("COSMOS_DATABASE", "shop"), "database name")
	container := flag.String("container", envOr("COSMOS_CONTAINER", "orders"), "orders container name")
	keys := flag.String("keys-container", envOr("IDEMPOTENCY_CONTAINER", cosmos.KeyContainer), "idempotency key container name")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	store, err := cosmos.Open(cosmos.Options{Endpoint: *endpoint, Key: os.Getenv("COSMOS_KEY")}, *database, *container)
	if err == nil {
		err = store.CreateContainers(ctx)
	}
	if err == nil {
		err = store.KeyStore(*keys).CreateContainer(ctx)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "cosmos-setup:", err)
		os.Exit(1)
	}
	fmt.Printf("cosmos-setup: %s has database %s with containers %s, %s and %s\n", *endpoint, *database, *container, cosmos.LeaseContainer, *keys)
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}
