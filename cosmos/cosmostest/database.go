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
	return queryAll(ctx, c, q, azcosmos.NewPartitionKey(), opts)
}

// queryAll reads every page of a query.
func queryAll(ctx context.Context, c *azcosmos.ContainerClient, q string, pk azcosmos.PartitionKey, opts *azcosmos.QueryOptions) ([]json.RawMessage, error) {
	var out []json.RawMessage
	pager := c.NewQueryItemsPager(q, pk, opts)
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
	if _, err := db.Delete(ctx, nil); err != nil && statusOf(err) != http.StatusNotFound {
		return fmt.Errorf("delete database %s: %w", d.name, err)
	}
	return nil
}

// statusOf returns the HTTP status of a Cosmos error, 0 when there was none.
func statusOf(err error) int {
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		return re.StatusCode
	}
	return 0
}

// Readable is a Store with Documents, for tests that read back every
// document of a type.
type Readable struct {
	*cosmos.Store
	*Database
}

// Keys is an idempotency key store with Document, the read of a record as
// stored that only tests make (idemtest.Backend).
type Keys struct {
	*cosmos.KeyStore
	db        *Database
	container string
}

// Keys returns ks, which holds its records in container of d, with Document.
func (d *Database) Keys(ks *cosmos.KeyStore, container string) Keys {
	return Keys{KeyStore: ks, db: d, container: container}
}

// Document returns the stored JSON of id, nil when there is none.
func (k Keys) Document(ctx context.Context, id string) (json.RawMessage, error) {
	c, err := k.db.client.NewContainer(k.db.name, k.container)
	if err != nil {
		return nil, fmt.Errorf("container %s/%s: %w", k.db.name, k.container, err)
	}
	resp, err := c.ReadItem(ctx, azcosmos.NewPartitionKeyString(id), id, nil)
	switch status := statusOf(err); {
	case err == nil:
		return resp.Value, nil
	case status == http.StatusNotFound:
		return nil, nil
	case status != http.StatusInternalServerError:
		return nil, fmt.Errorf("read idempotency key %s: %w", id, err)
	}
	// The local emulator answers a read of a missing item with 500
	// (docs/cosmos-emulators.md); a query by id answers truthfully. The key
	// container indexes nothing, so this is for emulators only.
	q := "SELECT * FROM c WHERE c.id = @id"
	opts := &azcosmos.QueryOptions{QueryParameters: []azcosmos.QueryParameter{{Name: "@id", Value: id}}}
	docs, err := queryAll(ctx, c, q, azcosmos.NewPartitionKeyString(id), opts)
	if err != nil || len(docs) == 0 {
		return nil, err
	}
	return docs[0], nil
}
