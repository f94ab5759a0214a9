package cosmos

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/ordersink/orders-consumer/idempotency"
)

// KeyContainer is the default container of idempotency key records
// (IDEMPOTENCY_CONTAINER). Its partition key path is /id: a key record is
// read and written by its id alone.
const KeyContainer = "idempotency-keys"

// KeyStore keeps idempotency key records ([idempotency.Store]) in their own
// container: not in the orders container, whose change feed would invoke
// the outbox publisher for every key record, whose documents live for good
// where key records expire after a day, and whose partition key is the
// orderId, which a key does not have before the request is read.
// Pattern: Standard package layout (docs/design-patterns.md#standard-package-layout).
type KeyStore struct {
	store       *Store
	containerID string
}

// KeyStore returns the KeyStore of container in the Store's database. It
// shares the Store's client: one connection pool, one credential, and the
// Store's recovery from a failed start.
func (s *Store) KeyStore(container string) *KeyStore {
	return &KeyStore{store: s, containerID: container}
}

// withContent echoes the written document: its _etag is the ETag when the
// ETag header is missing, as the local emulator leaves it. A key record is
// small (the stored response is an answer of a few hundred bytes), so the
// echo costs little.
var withContent = &azcosmos.ItemOptions{EnableContentResponseOnWrite: true}

// Claim creates the record; ErrExists when one with its id exists.
// Pattern: Create as claim (docs/design-patterns.md#create-as-claim).
func (k *KeyStore) Claim(ctx context.Context, r idempotency.Record) (string, error) {
	const op = "claim idempotency key"
	doc, err := json.Marshal(r)
	if err != nil {
		return "", classifyKey(op, r.ID, err)
	}
	resp, err := k.do(ctx, func(cc *azcosmos.ContainerClient) (azcosmos.ItemResponse, error) {
		return cc.CreateItem(ctx, azcosmos.NewPartitionKeyString(r.ID), doc, withContent)
	})
	if statusOf(err) == http.StatusConflict {
		return "", idempotency.ErrExists
	}
	if err != nil {
		return "", classifyKey(op, r.ID, err)
	}
	return etagOf(resp), nil
}

// Read returns the record of id with its ETag; ErrNotFound when none.
func (k *KeyStore) Read(ctx context.Context, id string) (idempotency.Record, error) {
	const op = "read idempotency key"
	resp, err := k.do(ctx, func(cc *azcosmos.ContainerClient) (azcosmos.ItemResponse, error) {
		return cc.ReadItem(ctx, azcosmos.NewPartitionKeyString(id), id, nil)
	})
	if statusOf(err) == http.StatusNotFound {
		return idempotency.Record{}, idempotency.ErrNotFound
	}
	if err != nil {
		return idempotency.Record{}, classifyKey(op, id, err)
	}
	var r idempotency.Record
	if err := json.Unmarshal(resp.Value, &r); err != nil {
		return idempotency.Record{}, classifyKey(op, id, fmt.Errorf("stored key record is not one: %w", err))
	}
	r.ETag = etagOf(resp)
	return r, nil
}

// Replace writes r over the record if its ETag is still etag (If-Match);
// ErrFenced when it is not (412) or when the record is gone (404).
// Pattern: Conditional write by ETag (docs/design-patterns.md#conditional-write-by-etag).
func (k *KeyStore) Replace(ctx context.Context, r idempotency.Record, etag string) (string, error) {
	const op = "replace idempotency key"
	doc, err := json.Marshal(r)
	if err != nil {
		return "", classifyKey(op, r.ID, err)
	}
	match := azcore.ETag(etag)
	opts := *withContent
	opts.IfMatchEtag = &match
	resp, err := k.do(ctx, func(cc *azcosmos.ContainerClient) (azcosmos.ItemResponse, error) {
		return cc.ReplaceItem(ctx, azcosmos.NewPartitionKeyString(r.ID), r.ID, doc, &opts)
	})
	if fenced(err) {
		return "", idempotency.ErrFenced
	}
	if err != nil {
		return "", classifyKey(op, r.ID, err)
	}
	return etagOf(resp), nil
}

// Release deletes the record of id if its ETag is still etag.
// Pattern: Conditional write by ETag (docs/design-patterns.md#conditional-write-by-etag).
func (k *KeyStore) Release(ctx context.Context, id, etag string) error {
	match := azcore.ETag(etag)
	_, err := k.do(ctx, func(cc *azcosmos.ContainerClient) (azcosmos.ItemResponse, error) {
		return cc.DeleteItem(ctx, azcosmos.NewPartitionKeyString(id), id, &azcosmos.ItemOptions{IfMatchEtag: &match})
	})
	if fenced(err) {
		return idempotency.ErrFenced
	}
	if err != nil {
		return classifyKey("release idempotency key", id, err)
	}
	return nil
}

// fenced: the conditional write found another version (412), or none: a
// record released or expired since is not this writer's either.
func fenced(err error) bool {
	s := statusOf(err)
	return s == http.StatusPreconditionFailed || s == http.StatusNotFound
}

// do runs f on the key container of the Store's current client.
func (k *KeyStore) do(ctx context.Context, f func(*azcosmos.ContainerClient) (azcosmos.ItemResponse, error)) (azcosmos.ItemResponse, error) {
	return callOn(ctx, k.store, k.containerID, f)
}

// etagOf returns the ETag of a response: the header, else the body's _etag
// (the local emulator sends no ETag header).
func etagOf(resp azcosmos.ItemResponse) string {
	if resp.ETag != "" {
		return string(resp.ETag)
	}
	var doc struct {
		ETag string `json:"_etag"`
	}
	_ = json.Unmarshal(resp.Value, &doc)
	return doc.ETag
}

// CreateContainer creates the key container (partition key /id, TTL on with
// no default: every record carries its own ttl, nothing indexed: a record
// is only ever read by its id, as Bicep creates it) where it does not exist;
// the database must exist (Store.CreateContainers). For emulators
// (cmd/cosmos-setup), as CreateContainers.
func (k *KeyStore) CreateContainer(ctx context.Context) error {
	db, err := k.store.conn.Load().client.NewDatabase(k.store.database)
	if err != nil {
		return fmt.Errorf("database %s: %w", k.store.database, err)
	}
	ttlOn := int32(-1)
	p := azcosmos.ContainerProperties{ID: k.containerID, DefaultTimeToLive: &ttlOn,
		PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/id"}},
		IndexingPolicy: &azcosmos.IndexingPolicy{Automatic: true, IndexingMode: azcosmos.IndexingModeConsistent,
			ExcludedPaths: []azcosmos.ExcludedPath{{Path: "/*"}}}}
	if _, err := db.CreateContainer(ctx, p, nil); err != nil && statusOf(err) != http.StatusConflict {
		return fmt.Errorf("create container %s/%s: %w", k.store.database, k.containerID, err)
	}
	return nil
}
