package orders

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"time"
)

// TypeOrderStatus marks the document that holds an order's current status.
const TypeOrderStatus = "orderStatus"

// StatusChange is an OrderStatusChanged message: the absolute state of an
// order's status at a version. Applying it twice, or applying an older one
// after a newer one, changes nothing, so it needs no deduplication record.
type StatusChange struct {
	OrderID   string
	Status    string
	Version   int64
	ChangedAt time.Time
}

var statusPattern = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_.-]{0,63}$`)

// maxVersion keeps versions exact in every JSON parser (2^53 - 1).
const maxVersion = 1<<53 - 1

// ParseStatusChange decodes and validates an OrderStatusChanged body:
// orderId (the rules of docs/contract.md §3), status (a name of 1 to 64 letters,
// digits, '_', '.' or '-', starting with a letter), version (an integer from 1
// to 2^53-1) and changedAt (RFC 3339). Other members, meta included, are
// ignored. Errors are *[RejectError], as for orders.
func ParseStatusChange(body []byte) (*StatusChange, error) {
	fields, err := decodeObject(body)
	if err != nil {
		return nil, err
	}
	o := &Order{fields: fields} // reuse the member readers
	var c StatusChange
	if c.OrderID, err = o.requiredString("orderId"); err != nil {
		return nil, err
	}
	if err := CheckOrderID(c.OrderID); err != nil {
		return nil, err
	}
	if c.Status, err = o.requiredString("status"); err != nil {
		return nil, err
	}
	if !statusPattern.MatchString(c.Status) {
		return nil, invalid("status", "must be a name of 1 to 64 letters, digits, '_', '.' or '-' starting with a letter, got %q", truncate(c.Status, 40))
	}
	if c.Version, err = requiredVersion(fields); err != nil {
		return nil, err
	}
	changedAt, err := o.requiredString("changedAt")
	if err != nil {
		return nil, err
	}
	if c.ChangedAt, err = time.Parse(time.RFC3339Nano, changedAt); err != nil {
		return nil, invalid("changedAt", "must be an RFC 3339 timestamp such as \"2026-11-29T10:00:00Z\", got %q", truncate(changedAt, 40))
	}
	return &c, nil
}

func requiredVersion(fields map[string]json.RawMessage) (int64, error) {
	raw, ok := fields["version"]
	if !ok {
		return 0, invalid("version", "is required")
	}
	v, err := decodeValue(raw)
	if err != nil {
		return 0, malformed("version: %v", err)
	}
	n, ok := v.(json.Number)
	if !ok {
		return 0, invalid("version", "must be an integer from 1 to %d, got %s", int64(maxVersion), describe(v))
	}
	i, err := n.Int64()
	if err != nil || i < 1 || i > maxVersion {
		f, ferr := n.Float64()
		if err != nil && ferr == nil && f == math.Trunc(f) && f >= 1 && f <= maxVersion {
			return int64(f), nil // 3.0 or 3e0: an integer spelled as a float
		}
		return 0, invalid("version", "must be an integer from 1 to %d, got %s", int64(maxVersion), truncate(n.String(), 40))
	}
	return i, nil
}

// StatusDocumentID is the id of an order's status document, which lives in
// the order's partition beside the order.
func StatusDocumentID(orderID string) string { return orderID + ":status" }

// Document is the stored status: the state a message set, and which message
// set it.
func (c StatusChange) Document(messageID string, updatedAt time.Time) ([]byte, error) {
	return json.Marshal(map[string]any{
		"id":        StatusDocumentID(c.OrderID),
		"orderId":   c.OrderID,
		"type":      TypeOrderStatus,
		"status":    c.Status,
		"version":   c.Version,
		"changedAt": c.ChangedAt.UTC().Format(time.RFC3339Nano),
		"messageId": messageID,
		"updatedAt": updatedAt.UTC().Format(time.RFC3339Nano),
	})
}

// StoredStatus is the status document as it was when a change was decided.
type StoredStatus struct {
	Status  string
	Version int64
}

// StatusApplied says what ApplyStatus did.
type StatusApplied struct {
	// Applied is true when the change became the stored status; false when
	// the stored version was equal or newer, and nothing was written.
	Applied bool
	// Previous is the status the change replaced or lost to; nil when there
	// was none.
	Previous *StoredStatus
	// Attempts counts conditional writes lost to concurrent writers, plus
	// one.
	Attempts int
}

// StatusStore keeps each order's current status.
type StatusStore interface {
	// ApplyStatus stores the change unless the stored status has the same or
	// a newer version. Concurrent calls for one order end with the highest
	// version stored, whatever their order: every write is conditional on
	// the version it was decided against. The order itself need not exist:
	// the status is its own document.
	ApplyStatus(ctx context.Context, c StatusChange, messageID string, at time.Time) (StatusApplied, error)
}

func (p *Processor) processStatus(ctx context.Context, m Message) Result {
	c, err := ParseStatusChange(m.Body)
	if err != nil {
		return rejected(err, m.Body)
	}
	r := Result{Kind: OrderStatusChanged, OrderID: c.OrderID, Version: c.Version}
	store := p.Statuses
	if store == nil {
		store, _ = p.Store.(StatusStore)
	}
	if store == nil {
		return p.failed(r, m, fmt.Errorf("apply status %s v%d: no status store is configured", c.OrderID, c.Version))
	}
	applied, err := store.ApplyStatus(ctx, *c, m.MessageID, p.now())
	if err != nil {
		return p.failed(r, m, err)
	}
	r.Attempts = applied.Attempts
	if prev := applied.Previous; prev != nil {
		r.StoredVersion = prev.Version
	}
	if applied.Applied {
		r.Outcome = Applied
		return r
	}
	r.Outcome = Stale
	prev := applied.Previous
	if prev == nil {
		r.Description = fmt.Sprintf("order %s status %s v%d is not newer than the stored status", c.OrderID, c.Status, c.Version)
		return r
	}
	r.Description = fmt.Sprintf("order %s status %s v%d is not newer than the stored %s v%d", c.OrderID, c.Status, c.Version, prev.Status, prev.Version)
	if prev.Version == c.Version && prev.Status != c.Status {
		// Two different states under one version: a producer bug worth an
		// operator's look, though the first one stays.
		r.Description += "; the same version carried a different status"
		r.VersionConflict = true
	}
	return r
}
