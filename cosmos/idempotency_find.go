package cosmos

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/ordersink/orders-consumer/idempotency"
)

// FindByOrderID returns a key record of client and operation that names
// orderID (idempotency.WithOrderID), or idempotency.ErrNotFound: GetOrder
// answers "submitted" with it while the order is still on its way through
// the queue. Records are partitioned by their id, so this is a query across
// partitions, served by the container's index on /orderId; GetOrder asks
// only when the orders container has no such order. At the front door's
// scale (a record per request, kept a day) that is a few RU; a pointer
// document per order would make it a point read at the cost of a second
// write per submission.
func (k *KeyStore) FindByOrderID(ctx context.Context, client, operation, orderID string) (idempotency.Record, error) {
	const op = "find idempotency key"
	cc, err := k.store.conn.Load().client.NewContainer(k.store.database, k.containerID)
	if err != nil {
		return idempotency.Record{}, classify(op, orderID, err)
	}
	q := "SELECT * FROM c WHERE c.orderId = @o AND c.client = @c AND c.operation = @op"
	opts := &azcosmos.QueryOptions{QueryParameters: []azcosmos.QueryParameter{
		{Name: "@o", Value: orderID}, {Name: "@c", Value: client}, {Name: "@op", Value: operation}}}
	pager := cc.NewQueryItemsPager(q, azcosmos.NewPartitionKey(), opts)
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return idempotency.Record{}, classify(op, orderID, err)
		}
		for _, it := range page.Items {
			var r idempotency.Record
			if err := json.Unmarshal(it, &r); err != nil {
				return idempotency.Record{}, classify(op, orderID, fmt.Errorf("stored key record is not one: %w", err))
			}
			return r, nil
		}
	}
	return idempotency.Record{}, idempotency.ErrNotFound
}
