package orders

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
)

// OrderReader reads what the store holds about one order: every document of
// its partition (the order, its status, its conflict records, its outbox
// event). cosmos.Store and orderstest.MemStore implement it; it serves
// SubmitOrder's GET and ordersctl's "order show".
type OrderReader interface {
	PartitionDocuments(ctx context.Context, orderID string) ([]json.RawMessage, error)
}

// ViewReader reads what a [View] shows of an order: its documents of the
// [ViewTypes], each with only the [ViewFields]. Not the whole partition:
// conflict records keep the body of every resend with other content (any
// caller of SubmitOrder can add them), and the order document the order's
// own members, so a reader of whole documents would read megabytes to show
// a few hashes and dates. cosmos.Store and orderstest.MemStore implement it.
type ViewReader interface {
	ViewDocuments(ctx context.Context, orderID string) ([]json.RawMessage, error)
}

// ViewTypes are the document types [ReadView] interprets.
var ViewTypes = []string{TypeOrder, TypeOrderStatus, TypeConflict}

// ViewFields are the members of those documents [ReadView] reads.
var ViewFields = []string{"type", "requestHash", "hashVersion", "messageId", "acceptedAt",
	"status", "version", "changedAt", "incomingHash", "detectedAt"}

// View is an order as the store has it (docs/http-api.md, GET): nil Order
// when no order document exists (never accepted, or expired).
type View struct {
	OrderID string
	// Order is the accepted order's bookkeeping; nil when there is none.
	Order *StoredOrder
	// Status is the order's current status; nil when none was applied.
	Status *ViewStatus
	// Conflicts are the resends with other content, oldest first.
	Conflicts []ViewConflict
}

// StoredOrder is the bookkeeping of an accepted order document (§9).
type StoredOrder struct {
	RequestHash string `json:"requestHash"`
	HashVersion int    `json:"hashVersion"`
	MessageID   string `json:"messageId"`
	AcceptedAt  string `json:"acceptedAt"`
}

// ViewStatus is the status document of an order (§8).
type ViewStatus struct {
	Status    string `json:"status"`
	Version   int64  `json:"version"`
	ChangedAt string `json:"changedAt"`
}

// ViewConflict is one conflict record (§9), without the body it kept.
type ViewConflict struct {
	MessageID    string `json:"messageId"`
	IncomingHash string `json:"incomingHash"`
	DetectedAt   string `json:"detectedAt"`
}

// ReadView interprets the documents of an order's partition. Documents of
// other types (outbox events, parked bodies) are skipped; a document that is
// not JSON is an error, because the partition then holds what this
// consumer did not write.
func ReadView(orderID string, docs []json.RawMessage) (*View, error) {
	v := &View{OrderID: orderID, Conflicts: []ViewConflict{}}
	for _, raw := range docs {
		var head struct {
			Type string `json:"type"`
		}
		if err := json.Unmarshal(raw, &head); err != nil {
			return nil, fmt.Errorf("order %s: a stored document is not JSON: %w", orderID, err)
		}
		var err error
		switch head.Type {
		case TypeOrder:
			v.Order = &StoredOrder{}
			err = json.Unmarshal(raw, v.Order)
		case TypeOrderStatus:
			v.Status = &ViewStatus{}
			err = json.Unmarshal(raw, v.Status)
		case TypeConflict:
			var c ViewConflict
			err = json.Unmarshal(raw, &c)
			v.Conflicts = append(v.Conflicts, c)
		}
		if err != nil {
			return nil, fmt.Errorf("order %s: stored %s document: %w", orderID, head.Type, err)
		}
	}
	sort.Slice(v.Conflicts, func(i, j int) bool { return v.Conflicts[i].DetectedAt < v.Conflicts[j].DetectedAt })
	return v, nil
}
