package hostemu

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/ordersink/orders-consumer/cosmos"
)

// CosmosContainer is a container as the host's Cosmos DB extension reaches
// it: with a client of its own, not the handler's, so the handler's faults
// and outages do not touch it. The emulated trigger reads the monitored
// container and keeps its leases through it; a run writes and reads
// documents beside the handler with it.
type CosmosContainer struct{ c *azcosmos.ContainerClient }

// TriggerContainers opens the monitored and the lease container of fn's
// cosmosDBTrigger (names expanded from settings, as the host resolves
// %SETTING%), and returns the extension's lease id prefix:
// leaseContainerPrefix, the account host, the database's and the
// container's resource ids, then "..".
func TriggerContainers(ctx context.Context, fn *Function, settings *Settings, endpoint, key string) (monitored, leases *CosmosContainer, prefix string, err error) {
	t := fn.Trigger()
	client, err := cosmos.NewClient(cosmos.Options{Endpoint: endpoint, Key: key})
	if err != nil {
		return nil, nil, "", err
	}
	db, err := client.NewDatabase(settings.Expand(t.DatabaseName))
	if err != nil {
		return nil, nil, "", err
	}
	m, err := db.NewContainer(settings.Expand(t.ContainerName))
	if err != nil {
		return nil, nil, "", err
	}
	l, err := db.NewContainer(settings.Expand(t.LeaseContainerName))
	if err != nil {
		return nil, nil, "", err
	}
	u, err := url.Parse(endpoint)
	if err != nil {
		return nil, nil, "", err
	}
	c, err := m.Read(ctx, nil)
	if err != nil {
		return nil, nil, "", fmt.Errorf("%s: read container %s: %w", fn.Name, m.ID(), err)
	}
	d, err := db.Read(ctx, nil)
	if err != nil {
		return nil, nil, "", fmt.Errorf("%s: read database %s: %w", fn.Name, db.ID(), err)
	}
	lp, _ := t.Raw["leaseContainerPrefix"].(string)
	prefix = fmt.Sprintf("%s%s_%s_%s..", lp, u.Host, d.DatabaseProperties.ResourceID, c.ContainerProperties.ResourceID)
	return &CosmosContainer{m}, &CosmosContainer{l}, prefix, nil
}

// ID is the container's name.
func (c *CosmosContainer) ID() string { return c.c.ID() }

// Create writes a new document into partition pk.
func (c *CosmosContainer) Create(ctx context.Context, pk string, doc []byte) error {
	if _, err := c.c.CreateItem(ctx, azcosmos.NewPartitionKeyString(pk), doc, nil); err != nil {
		return fmt.Errorf("create a document in %s/%s: %w", c.c.ID(), pk, err)
	}
	return nil
}

// Exists reports whether the document is in the container. It reads the
// item: one request, whatever the container holds. The local emulator
// answers a read of a missing item with 500 (docs/cosmos-emulators.md), so
// 500 counts as missing too: Exists is for emulators.
func (c *CosmosContainer) Exists(ctx context.Context, pk, id string) (bool, error) {
	_, err := c.c.ReadItem(ctx, azcosmos.NewPartitionKeyString(pk), id, nil)
	switch statusCode(err) {
	case 0:
		if err != nil {
			return false, fmt.Errorf("read %s/%s: %w", c.c.ID(), id, err)
		}
		return true, nil
	case http.StatusNotFound, http.StatusInternalServerError:
		return false, nil
	}
	return false, fmt.Errorf("read %s/%s: %w", c.c.ID(), id, err)
}

// statusCode is the HTTP status of a Cosmos error, 0 when there was none.
func statusCode(err error) int {
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		return re.StatusCode
	}
	return 0
}
