package cosmos

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
)

// PartitionKeyPath is the orders container's partition key path: the orderId
// is the deduplication key, the id and the partition key value.
const PartitionKeyPath = "/orderId"

// LeaseContainer is the change-feed lease container of the outbox publisher.
const LeaseContainer = "leases"

// CreateContainers creates the database, the orders container (partition key
// /orderId, TTL on with no default expiry, so only records that carry a ttl
// expire) and the lease container, where they do not exist. It is for
// emulators and tests: in Azure, Bicep creates them and the handler's
// data-plane role could not.
func (s *Store) CreateContainers(ctx context.Context) error {
	if _, err := s.conn.Load().client.CreateDatabase(ctx, azcosmos.DatabaseProperties{ID: s.database}, nil); err != nil && statusOf(err) != http.StatusConflict {
		return fmt.Errorf("create database %s: %w", s.database, err)
	}
	db, err := s.conn.Load().client.NewDatabase(s.database)
	if err != nil {
		return fmt.Errorf("database %s: %w", s.database, err)
	}
	ttlOn := int32(-1)
	specs := []azcosmos.ContainerProperties{
		{ID: s.containerID, DefaultTimeToLive: &ttlOn, PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{PartitionKeyPath}}},
		{ID: LeaseContainer, PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/id"}}},
	}
	for _, p := range specs {
		if _, err := db.CreateContainer(ctx, p, nil); err != nil && statusOf(err) != http.StatusConflict {
			return fmt.Errorf("create container %s/%s: %w", s.database, p.ID, err)
		}
	}
	return nil
}

// DeleteDatabase removes the Store's database; tests use it to clean up.
func (s *Store) DeleteDatabase(ctx context.Context) error {
	db, err := s.conn.Load().client.NewDatabase(s.database)
	if err != nil {
		return err
	}
	if _, err := db.Delete(ctx, nil); err != nil && statusOf(err) != http.StatusNotFound {
		return fmt.Errorf("delete database %s: %w", s.database, err)
	}
	return nil
}

// PartitionDocuments returns every document in an order's partition: the
// order and whatever was written beside it (ordersctl order show, tests). One single-partition query; its errors are
// *orders.StoreError, transient or not as a write's are.
func (s *Store) PartitionDocuments(ctx context.Context, orderID string) ([]json.RawMessage, error) {
	return s.orderQuery(ctx, "SELECT * FROM c WHERE c.orderId = @o", orderID)
}

// orderQuery runs q, which filters on c.orderId = @o, in orderID's partition
// (the emulators ignore a query's partition key, hence the filter too), its
// errors classified as a read's.
func (s *Store) orderQuery(ctx context.Context, q, orderID string) ([]json.RawMessage, error) {
	opts := &azcosmos.QueryOptions{QueryParameters: []azcosmos.QueryParameter{{Name: "@o", Value: orderID}}}
	docs, err := s.query(ctx, q, azcosmos.NewPartitionKeyString(orderID), opts)
	if err != nil {
		return nil, classify("read order", orderID, err)
	}
	return docs, nil
}

// Documents returns every document of a type (order, conflict, outboxEvent…)
// across partitions. For tests and local checks, not for the hot path.
func (s *Store) Documents(ctx context.Context, docType string) ([]json.RawMessage, error) {
	q := "SELECT * FROM c WHERE c.type = @t"
	opts := &azcosmos.QueryOptions{QueryParameters: []azcosmos.QueryParameter{{Name: "@t", Value: docType}}}
	return s.query(ctx, q, azcosmos.NewPartitionKey(), opts)
}

func (s *Store) query(ctx context.Context, q string, pk azcosmos.PartitionKey, opts *azcosmos.QueryOptions) ([]json.RawMessage, error) {
	// Through call, as every other request: a fresh client's first request
	// waits for an account lookup the SDK detaches from ctx, and GetOrder's
	// read may be the first request after a start (cosmos/recovery.go).
	out, err := call(ctx, s, func(c *azcosmos.ContainerClient) ([]json.RawMessage, error) {
		return queryItems(ctx, c, q, pk, opts)
	})
	if err != nil {
		return nil, fmt.Errorf("query %q: %w", q, err)
	}
	return out, nil
}

// queryItems reads every page of a query on one container.
func queryItems(ctx context.Context, c *azcosmos.ContainerClient, q string, pk azcosmos.PartitionKey, opts *azcosmos.QueryOptions) ([]json.RawMessage, error) {
	var out []json.RawMessage
	pager := c.NewQueryItemsPager(q, pk, opts)
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return nil, err
		}
		for _, it := range page.Items {
			out = append(out, it)
		}
	}
	return out, nil
}
