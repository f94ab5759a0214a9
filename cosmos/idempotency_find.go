package cosmos

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/ordersink/orders-consumer/idempotency"
)

// FindByOrderID returns the key records of client and operation that name
// orderID (idempotency.WithOrderID), in any state, none when there are
// none: GetOrder answers "submitted" with one while the order is still on
// its way through the queue. Records are partitioned by their id, so this is a query across
// partitions, served by the container's index on /orderId; GetOrder asks
// only when the orders container has no such order. At the front door's
// scale (a record per request, kept a day) that is a few RU; a pointer
// document per order would make it a point read at the cost of a second
// write per submission.
func (k *KeyStore) FindByOrderID(ctx context.Context, client, operation, orderID string) ([]idempotency.Record, error) {
	const op = "find idempotency key"
	q := "SELECT * FROM c WHERE c.orderId = @o AND c.client = @c AND c.operation = @op"
	opts := &azcosmos.QueryOptions{QueryParameters: []azcosmos.QueryParameter{
		{Name: "@o", Value: orderID}, {Name: "@c", Value: client}, {Name: "@op", Value: operation}}}
	// Through call, as every other KeyStore request: a client's first
	// request waits for an account lookup the SDK detaches from ctx, and
	// GetOrder may be the first request after a start (cosmos/recovery.go).
	items, err := callOn(ctx, k.store, k.containerID, func(cc *azcosmos.ContainerClient) ([]json.RawMessage, error) {
		return queryItems(ctx, cc, q, azcosmos.NewPartitionKey(), opts)
	})
	if err != nil {
		return nil, classify(op, orderID, err)
	}
	var out []idempotency.Record
	for _, it := range items {
		var r idempotency.Record
		if err := json.Unmarshal(it, &r); err != nil {
			return nil, classify(op, orderID, fmt.Errorf("stored key record is not one: %w", err))
		}
		out = append(out, r)
	}
	return out, nil
}
