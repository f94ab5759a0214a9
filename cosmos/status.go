package cosmos

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/ordersink/orders-consumer/orders"
)

// MaxStatusAttempts bounds the conditional writes of one status change. Each
// lost race means another writer committed, so n concurrent writers of one
// order all finish within n attempts; past the bound the message is retried
// by redelivery.
const MaxStatusAttempts = 8

// ApplyStatus stores the change in the order's status document unless that
// holds the same or a newer version. The first status of an order is one
// create; later ones read the document and replace it on the condition that
// its ETag is still the one read (If-Match), so a writer that lost a race
// (412) reads again and decides again.
//
// The create comes first, and not a read, because most orders get their
// first status before any other: then the create is the whole write (one
// request), where a read first would cost a 404 and the create (two).
// Pattern: Conditional write by ETag (docs/design-patterns.md#conditional-write-by-etag).
func (s *Store) ApplyStatus(ctx context.Context, c orders.StatusChange, messageID string, at time.Time) (orders.StatusApplied, error) {
	const op = "apply status"
	doc, err := c.Document(messageID, at)
	if err != nil {
		return orders.StatusApplied{}, &orders.StoreError{Op: op, OrderID: c.OrderID, Err: err}
	}
	pk := azcosmos.NewPartitionKeyString(c.OrderID)
	id := orders.StatusDocumentID(c.OrderID)
	exists := false
	var prev *orders.StoredStatus
	for attempt := 1; attempt <= MaxStatusAttempts; attempt++ {
		if !exists {
			_, err := call(ctx, s, func(cc *azcosmos.ContainerClient) (azcosmos.ItemResponse, error) {
				return cc.CreateItem(ctx, pk, doc, noContent)
			})
			switch {
			case err == nil:
				return orders.StatusApplied{Applied: true, Previous: prev, Attempts: attempt}, nil
			case statusOf(err) != http.StatusConflict:
				return orders.StatusApplied{}, classify(op, c.OrderID, err)
			}
			exists = true
		}
		stored, etag, err := s.readStatus(ctx, pk, id)
		if err != nil {
			return orders.StatusApplied{}, classify(op, c.OrderID, err)
		}
		prev = stored
		if stored.Version >= c.Version {
			return orders.StatusApplied{Previous: stored, Attempts: attempt}, nil
		}
		_, err = call(ctx, s, func(cc *azcosmos.ContainerClient) (azcosmos.ItemResponse, error) {
			return cc.ReplaceItem(ctx, pk, id, doc, &azcosmos.ItemOptions{IfMatchEtag: &etag})
		})
		if err == nil {
			return orders.StatusApplied{Applied: true, Previous: prev, Attempts: attempt}, nil
		}
		switch statusOf(err) {
		case http.StatusPreconditionFailed:
			continue // another writer won: read again and decide again
		case http.StatusNotFound:
			exists = false // deleted meanwhile: create again
			continue
		}
		return orders.StatusApplied{}, classify(op, c.OrderID, err)
	}
	return orders.StatusApplied{}, &orders.StoreError{Op: op, OrderID: c.OrderID, Status: http.StatusPreconditionFailed, IsTransient: true,
		Err: fmt.Errorf("version %d lost %d races against concurrent status writers", c.Version, MaxStatusAttempts)}
}

// readStatus returns the stored status and the ETag to make the next write
// conditional on.
func (s *Store) readStatus(ctx context.Context, pk azcosmos.PartitionKey, id string) (*orders.StoredStatus, azcore.ETag, error) {
	resp, err := call(ctx, s, func(cc *azcosmos.ContainerClient) (azcosmos.ItemResponse, error) {
		return cc.ReadItem(ctx, pk, id, nil)
	})
	if err != nil {
		return nil, "", err
	}
	var stored struct {
		Status  string      `json:"status"`
		Version int64       `json:"version"`
		ETag    azcore.ETag `json:"_etag"`
	}
	if err := json.Unmarshal(resp.Value, &stored); err != nil {
		return nil, "", fmt.Errorf("status document %s: %w", id, err)
	}
	etag := resp.ETag
	if etag == "" {
		// Some emulators send no ETag header; the body has the same value.
		etag = stored.ETag
	}
	return &orders.StoredStatus{Status: stored.Status, Version: stored.Version}, etag, nil
}
