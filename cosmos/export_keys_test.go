package cosmos

import (
	"context"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
)

// Properties reads the key container's properties.
func (k *KeyStore) Properties(ctx context.Context) (azcosmos.ContainerProperties, error) {
	cc, err := k.store.conn.Load().client.NewContainer(k.store.database, k.containerID)
	if err != nil {
		return azcosmos.ContainerProperties{}, err
	}
	resp, err := cc.Read(ctx, nil)
	if err != nil || resp.ContainerProperties == nil {
		return azcosmos.ContainerProperties{}, err
	}
	return *resp.ContainerProperties, nil
}
