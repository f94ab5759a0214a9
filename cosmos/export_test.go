package cosmos

import (
	"context"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
)

// CreateDocument writes a document as is, for tests that need a state the
// consumer never produces on its own (an order without its outbox event).
func (s *Store) CreateDocument(ctx context.Context, orderID string, doc []byte) error {
	_, err := s.conn.Load().container.CreateItem(ctx, azcosmos.NewPartitionKeyString(orderID), doc, nil)
	return err
}
