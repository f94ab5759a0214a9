package cosmostest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/ordersink/orders-consumer/cosmos"
)

// Database reaches a test database with a client of its own, beside the
// cosmos.Store under test: the reads and the clean-up that only tests and
// the bench need, which the product's Store does not offer.
type Database struct {
	client    *azcosmos.Client
	name      string
	container string
}

// OpenDatabase returns a Database for database and its orders container
// container at the endpoint of o.
func OpenDatabase(o cosmos.Options, database, container string) (*Database, error) {
	c, err := cosmos.NewClient(o)
	if err != nil {
		return nil, err
	}
	return &Database{client: c, name: database, container: container}, nil
}

// Documents returns every document of a type (order, conflict, outboxEvent…)
// in the orders container, across partitions.
func (d *Database) Documents(ctx context.Context, docType string) ([]json.RawMessage, error) {
	c, err := d.client.NewContainer(d.name, d.container)
	if err != nil {
		return nil, fmt.Errorf("container %s/%s: %w", d.name, d.container, err)
	}
	q := "SELECT * FROM c WHERE c.type = @t"
	opts := &azcosmos.QueryOptions{QueryParameters: []azcosmos.QueryParameter{{Name: "@t", Value: docType}}}
	var out []json.RawMessage
	pager := c.NewQueryItemsPager(q, azcosmos.NewPartitionKey(), opts)
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("query %q: %w", q, err)
		}
		for _, it := range page.Items {
			out = append(out, it)
		}
	}
	return out, nil
}

// Delete removes the database; one already gone is not an error.
func (d *Database) Delete(ctx context.Context) error {
	db, err := d.client.NewDatabase(d.name)
	if err != nil {
		return err
	}
	if _, err := db.Delete(ctx, nil); err != nil && !isNotFound(err) {
		return fmt.Errorf("delete database %s: %w", d.name, err)
	}
	return nil
}

func isNotFound(err error) bool {
	var re *azcore.ResponseError
	return errors.As(err, &re) && re.StatusCode == http.StatusNotFound
}

// Readable is a Store with Documents, for tests that read back every
// document of a type.
type Readable struct {
	*cosmos.Store
	*Database
}
