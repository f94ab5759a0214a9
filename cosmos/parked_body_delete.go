package cosmos

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/ordersink/orders-consumer/orders"
)

// ParkedBodyVersions returns the documents of the parked body with digest
// (docs/contract.md §6) in its partition: each id with its _etag, which
// changes each time the body is parked again (ParkBody writes every part).
// None found is an empty map.
func (s *Store) ParkedBodyVersions(ctx context.Context, partitionKey, digest string) (map[string]string, error) {
	q := "SELECT c.id, c._etag FROM c WHERE c.orderId = @o AND c.type = @t AND c.bodySha256 = @d"
	opts := &azcosmos.QueryOptions{QueryParameters: []azcosmos.QueryParameter{
		{Name: "@o", Value: partitionKey}, {Name: "@t", Value: orders.TypeParkedBody}, {Name: "@d", Value: digest}}}
	docs, err := s.query(ctx, q, azcosmos.NewPartitionKeyString(partitionKey), opts)
	if err != nil {
		return nil, classify("find parked body", partitionKey, err)
	}
	versions := make(map[string]string, len(docs))
	for _, raw := range docs {
		var doc struct {
			ID   string `json:"id"`
			ETag string `json:"_etag"`
		}
		// Without its _etag the delete could not be made conditional.
		if err := json.Unmarshal(raw, &doc); err != nil || doc.ID == "" || doc.ETag == "" {
			return nil, &orders.StoreError{Op: "find parked body", OrderID: partitionKey, Err: fmt.Errorf("a document without id and _etag: %s", raw)}
		}
		versions[doc.ID] = doc.ETag
	}
	return versions, nil
}

// DeleteParkedBody deletes the documents of a parked body, as
// ParkedBodyVersions read them, that are unchanged since: parked bodies
// never expire, so ordersctl deletes one once no envelope points at it any
// more. A document written since (the body parked again: an envelope
// sent meanwhile points at it) is kept, and counted in kept; one gone
// already is neither (a run interrupted after the delete and started
// again).
func (s *Store) DeleteParkedBody(ctx context.Context, partitionKey string, versions map[string]string) (deleted, kept int, err error) {
	pk := azcosmos.NewPartitionKeyString(partitionKey)
	for id, etag := range versions {
		match := azcore.ETag(etag)
		_, err := call(ctx, s, func(cc *azcosmos.ContainerClient) (azcosmos.ItemResponse, error) {
			return cc.DeleteItem(ctx, pk, id, &azcosmos.ItemOptions{IfMatchEtag: &match})
		})
		switch statusOf(err) {
		case 0:
			deleted++
		case http.StatusNotFound: // deleted meanwhile
		case http.StatusPreconditionFailed:
			kept++
		default:
			return deleted, kept, classify("delete parked body "+id, partitionKey, err)
		}
	}
	return deleted, kept, nil
}
