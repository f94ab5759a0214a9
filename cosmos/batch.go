package cosmos

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/ordersink/orders-consumer/orders"
)

// Limits of one Cosmos DB transactional batch: at most 100 operations and a
// 2 MB request, all in one logical partition. A batch past them is refused
// with 400 or 413 on every attempt, so it is checked before sending.
const (
	MaxBatchOperations = 100
	MaxBatchBytes      = 2 << 20
	// batchOpOverhead bounds what the SDK adds around each document in the
	// request body ({"operationType":"Create","resourceBody":...},).
	batchOpOverhead = 64
)

// BatchLimitError says why a batch was refused before it was sent.
type BatchLimitError struct {
	OrderID    string
	Operations int
	Bytes      int
	Reason     string
}

func (e *BatchLimitError) Error() string {
	return fmt.Sprintf("transactional batch of %d operations, %d bytes, for order %s: %s",
		e.Operations, e.Bytes, e.OrderID, e.Reason)
}

// checkBatch refuses a batch Cosmos DB would refuse: too many operations,
// too many bytes, or a document outside the partition.
func checkBatch(orderID string, docs []orders.NewDocument) error {
	size := 2
	for _, d := range docs {
		size += len(d.Body) + batchOpOverhead
	}
	e := &BatchLimitError{OrderID: orderID, Operations: len(docs), Bytes: size}
	switch {
	case len(docs) == 0:
		e.Reason = "it has no operations"
	case len(docs) > MaxBatchOperations:
		e.Reason = fmt.Sprintf("Cosmos DB accepts at most %d operations in one batch", MaxBatchOperations)
	case size > MaxBatchBytes:
		e.Reason = fmt.Sprintf("Cosmos DB accepts at most %d bytes (2 MB) in one batch; the order document is %d bytes",
			MaxBatchBytes, len(docs[0].Body))
	default:
		for _, d := range docs {
			if pk := partitionKeyOf(d.Body); pk != orderID {
				e.Reason = fmt.Sprintf("document %s has orderId %q, outside the batch's partition", d.ID, pk)
				return e
			}
		}
		return nil
	}
	return e
}

// partitionKeyOf reads the orderId of a document this package is about to
// write.
func partitionKeyOf(doc []byte) string {
	var v struct {
		OrderID string `json:"orderId"`
	}
	_ = json.Unmarshal(doc, &v)
	return v.OrderID
}

// batchCreate creates docs in one transactional batch in orderID's partition.
// It returns markerExists when the first document (the marker) existed, in
// which case nothing was written; nil when all were created; an error
// otherwise, after which nothing may be assumed written.
//
// The outcome is read from every operation's status code: the local
// emulators answer 200 (Success=true) even when an operation failed, and
// real Cosmos answers 207 with the failing operation's code and 424 for the
// others.
func (s *Store) batchCreate(ctx context.Context, op, orderID string, docs []orders.NewDocument) (markerExists bool, err error) {
	if err := checkBatch(orderID, docs); err != nil {
		return false, &orders.StoreError{Op: op, OrderID: orderID, Status: http.StatusRequestEntityTooLarge, Err: err}
	}
	resp, err := call(ctx, s, func(c *azcosmos.ContainerClient) (azcosmos.TransactionalBatchResponse, error) {
		b := c.NewTransactionalBatch(azcosmos.NewPartitionKeyString(orderID))
		for _, d := range docs {
			b.CreateItem(d.Body, nil)
		}
		return c.ExecuteTransactionalBatch(ctx, b, nil)
	})
	if err != nil {
		return false, classify(op, orderID, err)
	}
	results := resp.OperationResults
	if len(results) != len(docs) {
		return false, &orders.StoreError{Op: op, OrderID: orderID, Status: resp.RawResponse.StatusCode, IsTransient: true,
			Err: fmt.Errorf("batch of %d operations answered %d results", len(docs), len(results))}
	}
	if results[0].StatusCode == http.StatusConflict {
		return true, nil
	}
	for i, r := range results {
		status := int(r.StatusCode)
		if status < 400 || status == http.StatusFailedDependency {
			continue
		}
		// A conflict past the marker means a document that only this change
		// writes exists without its marker: no redelivery can fix that.
		transient := isTransient(status) && status != http.StatusConflict
		return false, &orders.StoreError{Op: op, OrderID: orderID, Status: status, IsTransient: transient,
			Err: fmt.Errorf("batch operation %d (create %s): %d %s (Cosmos DB rolls the whole batch back)", i, docs[i].ID, status, http.StatusText(status))}
	}
	if !resp.Success || anyFailed(results) {
		return false, &orders.StoreError{Op: op, OrderID: orderID, Status: resp.RawResponse.StatusCode, IsTransient: true,
			Err: fmt.Errorf("batch failed without a cause (operation statuses %s)", statuses(results))}
	}
	return false, nil
}

func anyFailed(results []azcosmos.TransactionalBatchResult) bool {
	for _, r := range results {
		if r.StatusCode >= 400 {
			return true
		}
	}
	return false
}

func statuses(results []azcosmos.TransactionalBatchResult) string {
	parts := make([]string, len(results))
	for i, r := range results {
		parts[i] = fmt.Sprint(r.StatusCode)
	}
	return "[" + strings.Join(parts, ",") + "]"
}
