package cosmos

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/ordersink/orders-consumer/orders"
)

// DeleteParkedBody deletes the documents of the parked body with digest
// (docs/contract.md §6) in its partition, and returns how many it deleted.
// Parked bodies never expire, so ordersctl deletes one once no envelope
// points at it any more. None found is no error: a run interrupted after
// the delete and started again finds none.
func (s *Store) DeleteParkedBody(ctx context.Context, partitionKey, digest string) (int, error) {
	q := "SELECT c.id FROM c WHERE c.orderId = @o AND c.type = @t AND c.bodySha256 = @d"
	opts := &azcosmos.QueryOptions{QueryParameters: []azcosmos.QueryParameter{
		{Name: "@o", Value: partitionKey}, {Name: "@t", Value: orders.TypeParkedBody}, {Name: "@d", Value: digest}}}
	pk := azcosmos.NewPartitionKeyString(partitionKey)
	docs, err := s.query(ctx, q, pk, opts)
	if err != nil {
		return 0, classify("find parked body", partitionKey, err)
	}
	deleted := 0
	for _, raw := range docs {
		var doc struct {
			ID string `json:"id"`
		}
		if err := json.Unmarshal(raw, &doc); err != nil {
			return deleted, &orders.StoreError{Op: "delete parked body", OrderID: partitionKey, Err: err}
		}
		id := doc.ID
		_, err := call(ctx, s, func(cc *azcosmos.ContainerClient) (azcosmos.ItemResponse, error) {
			return cc.DeleteItem(ctx, pk, id, nil)
		})
		switch {
		case statusOf(err) == http.StatusNotFound: // deleted meanwhile
		case err != nil:
			return deleted, classify("delete parked body "+id, partitionKey, err)
		default:
			deleted++
		}
	}
	return deleted, nil
}
