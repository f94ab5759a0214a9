package bench

import (
	"context"
	"fmt"
	"net/http"

	"github.com/ordersink/orders-consumer/cosmos"
	"github.com/ordersink/orders-consumer/cosmos/cosmostest"
)

// Target is the Cosmos DB endpoint and the database a run writes to.
type Target struct {
	Endpoint  string
	Key       string
	Database  string
	Container string
}

// Options returns the cosmos.Options for the target over rt.
func (t Target) Options(rt http.RoundTripper) cosmos.Options {
	return cosmos.Options{Endpoint: t.Endpoint, Key: t.Key, Transport: rt}
}

// Prepare creates the target's database and containers, the idempotency
// key container too.
func (t Target) Prepare(ctx context.Context) error {
	s, err := cosmos.Open(t.Options(nil), t.Database, t.Container)
	if err != nil {
		return err
	}
	err = s.CreateContainers(ctx)
	if err == nil {
		err = s.KeyStore(cosmos.KeyContainer).CreateContainer(ctx)
	}
	if err != nil {
		return fmt.Errorf("prepare %s: %w", t.Database, err)
	}
	return nil
}

// Drop deletes the target's database.
func (t Target) Drop(ctx context.Context) error {
	db, err := cosmostest.OpenDatabase(t.Options(nil), t.Database, t.Container)
	if err != nil {
		return err
	}
	return db.Delete(ctx)
}
