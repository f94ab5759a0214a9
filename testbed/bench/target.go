package bench

import (
	"context"
	"fmt"
	"net/http"
	"time"

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

// Create creates the target's database and containers, the idempotency
// key container too; drop deletes the database (within a minute).
func (t Target) Create(ctx context.Context) (drop func() error, err error) {
	s, err := cosmos.Open(t.Options(nil), t.Database, t.Container)
	if err != nil {
		return nil, err
	}
	err = s.CreateContainers(ctx)
	if err == nil {
		err = s.KeyStore(cosmos.KeyContainer).CreateContainer(ctx)
	}
	if err != nil {
		return nil, fmt.Errorf("prepare %s: %w", t.Database, err)
	}
	return func() error {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		db, err := cosmostest.OpenDatabase(t.Options(nil), t.Database, t.Container)
		if err != nil {
			return err
		}
		return db.Delete(ctx)
	}, nil
}
