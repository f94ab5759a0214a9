package cosmos

import (
	"context"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
)

// DeleteDocument deletes one document, for tests of a document that
// disappears between two requests of one operation.
func (s *Store) DeleteDocument(ctx context.Context, orderID, id string) error {
	_, err := s.conn.Load().container.DeleteItem(ctx, azcosmos.NewPartitionKeyString(orderID), id, nil)
	return err
}

// DefaultTTL reads the orders container's default time to live, nil when
// TTL is off.
func (s *Store) DefaultTTL(ctx context.Context) (*int32, error) {
	resp, err := s.conn.Load().container.Read(ctx, nil)
	if err != nil {
		return nil, err
	}
	return resp.ContainerProperties.DefaultTimeToLive, nil
}
