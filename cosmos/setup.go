package cosmos

import (
	"context"
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
// emulators (cmd/cosmos-setup): in Azure, Bicep creates them and the
// handler's data-plane role could not.
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
