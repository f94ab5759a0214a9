package cosmos

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
)

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
