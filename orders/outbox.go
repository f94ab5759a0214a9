package orders

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// TypeOutboxEvent marks an event document waiting in the orders container for
// the publisher (the transactional outbox). It is written in the same
// transactional batch as the change that caused it, so the event exists if
// and only if the change does.
const TypeOutboxEvent = "outboxEvent"

// EventOrderAccepted is the event published once for every accepted order.
const EventOrderAccepted = "OrderAccepted"

// OutboxEventTTL is how long an outbox event document is kept, in seconds
// (30 days). The change feed hands it to the publisher within seconds; the
// rest is an audit window. It must outlast the longest publisher outage:
// a document that expires before the change feed reaches it is never
// published (deletions do not appear in the latest-version change feed).
const OutboxEventTTL = 30 * 24 * 3600

// NewDocument is one document a change writes. All documents of one change
// share the order's partition, so they can commit in one transactional batch.
type NewDocument struct {
	ID   string
	Body []byte
}

// EventID is the deterministic id of an order's event of the given type: a
// redelivered message rebuilds the same id, so the event can never be written
// twice, and consumers can deduplicate on it.
func EventID(orderID, eventType string) string {
	return orderID + ":event:" + eventType
}

// AcceptanceBatch is what accepting one order writes, built once per
// delivery: the store sends Documents as one transactional batch
// (docs/contract.md §9), and the processor first checks Event against the
// events topic's size budget (docs/contract.md §3, event size), so the event
// that is checked is the event that is written.
// Pattern: Transactional outbox (docs/design-patterns.md#transactional-outbox).
type AcceptanceBatch struct {
	// OrderID is the partition every document belongs to.
	OrderID string
	// Documents in batch order: the order document first (it is the
	// deduplication marker: creating it fails with a conflict when the order
	// exists), then its OrderAccepted outbox event.
	Documents []NewDocument
	// Event is the OrderAccepted event exactly as the publisher will send
	// it: the outbox document without the members only the stored form
	// has (id, type, ttl), which [PublishableEvent] removes.
	Event json.RawMessage
}

// AcceptanceDocuments builds what accepting the order writes: the order
// document and its OrderAccepted outbox event ([AcceptanceBatch]).
func (o *Order) AcceptanceDocuments(a Acceptance) (*AcceptanceBatch, error) {
	order, err := o.Document(a)
	if err != nil {
		return nil, err
	}
	e, err := o.AcceptedEvent(a)
	if err != nil {
		return nil, err
	}
	published, err := json.Marshal(e)
	if err != nil {
		return nil, fmt.Errorf("encode %s event of %s: %w", EventOrderAccepted, o.ID, err)
	}
	stored, err := storedEvent(e.EventID, published)
	if err != nil {
		return nil, fmt.Errorf("encode %s outbox document of %s: %w", EventOrderAccepted, o.ID, err)
	}
	return &AcceptanceBatch{
		OrderID:   o.ID,
		Documents: []NewDocument{{ID: o.ID, Body: order}, {ID: e.EventID, Body: stored}},
		Event:     published,
	}, nil
}

// storedEvent is the outbox document of a published event: its members and,
// in front of them, id, type and ttl. It is spliced from the published bytes
// rather than encoded again because the payload copies the order's lines,
// which may be most of a 256 KB message.
func storedEvent(id string, published []byte) ([]byte, error) {
	head, err := json.Marshal(struct {
		ID   string `json:"id"`
		Type string `json:"type"`
		TTL  int    `json:"ttl"`
	}{id, TypeOutboxEvent, OutboxEventTTL})
	if err != nil {
		return nil, err
	}
	if !bytes.HasPrefix(published, []byte(`{"`)) {
		return nil, fmt.Errorf("event %s is not a JSON object with members", id)
	}
	doc := make([]byte, 0, len(head)+len(published))
	doc = append(doc, head[:len(head)-1]...)
	doc = append(doc, ',')
	return append(doc, published[1:]...), nil
}

// OutboxEvent is the stored form of an event, and also the body published to
// the order-events topic: downstream consumers deduplicate on EventID (also
// sent as IdempotencyKey, the name consumers of other producers look for),
// because the Service Bus output binding cannot set the message's MessageId.
type OutboxEvent struct {
	ID             string          `json:"id,omitempty"` // stored form only
	OrderID        string          `json:"orderId"`
	Type           string          `json:"type,omitempty"` // stored form only
	EventID        string          `json:"eventId"`
	IdempotencyKey string          `json:"idempotencyKey"`
	EventType      string          `json:"eventType"`
	OccurredAt     string          `json:"occurredAt"`
	RequestHash    string          `json:"requestHash,omitempty"`
	Payload        json.RawMessage `json:"payload"`
	TTL            int             `json:"ttl,omitempty"` // stored form only
}

// acceptedPayload lists the members of the order a downstream consumer needs,
// copied exactly as the producer sent them.
var acceptedPayload = []string{"orderId", "customerId", "currency", "lines", "total", "placedAt"}

// AcceptedEvent is the order's OrderAccepted event as it is published.
func (o *Order) AcceptedEvent(a Acceptance) (*OutboxEvent, error) {
	copied := make(map[string]json.RawMessage, len(acceptedPayload))
	for _, k := range acceptedPayload {
		if raw, ok := o.fields[k]; ok {
			copied[k] = raw
		}
	}
	// mergeObject sorts the names as json.Marshal does a map's, and the
	// event's encoding compacts the members as sent.
	p, err := mergeObject(copied, map[string]any{
		"messageId":  a.MessageID,
		"acceptedAt": FormatInstant(a.AcceptedAt),
	})
	if err != nil {
		return nil, fmt.Errorf("encode %s payload of %s: %w", EventOrderAccepted, o.ID, err)
	}
	id := EventID(o.ID, EventOrderAccepted)
	return &OutboxEvent{
		OrderID: o.ID, EventID: id, IdempotencyKey: id, EventType: EventOrderAccepted,
		OccurredAt:  FormatInstant(a.AcceptedAt),
		RequestHash: o.Hash, Payload: p,
	}, nil
}

// PublishableEvent turns a document from the orders container's change feed
// into the event to publish. It returns nil and no error for documents that
// are not outbox events (orders, conflict records, statuses), and an error for
// an outbox event it cannot publish. The result depends only on the document,
// so a replayed change feed batch publishes identical messages.
func PublishableEvent(doc []byte) (*OutboxEvent, error) {
	// One decode settles every document whose members have the types an
	// outbox event's have; only one that fails it is read again, by type
	// first, to tell a document that is no event from a broken event.
	var e OutboxEvent
	if err := json.Unmarshal(doc, &e); err != nil {
		var head struct {
			Type string `json:"type"`
		}
		if err := json.Unmarshal(doc, &head); err != nil {
			return nil, fmt.Errorf("change feed document is not a JSON object: %w", err)
		}
		if head.Type != TypeOutboxEvent {
			return nil, nil
		}
		return nil, fmt.Errorf("outbox event document: %w", err)
	}
	if e.Type != TypeOutboxEvent {
		return nil, nil
	}
	switch {
	case e.EventID == "" || e.OrderID == "" || e.EventType == "":
		return nil, fmt.Errorf("outbox event %q lacks eventId, orderId or eventType", e.ID)
	case len(e.Payload) == 0 || e.Payload[0] != '{':
		return nil, fmt.Errorf("outbox event %s has no payload object", e.EventID)
	}
	if e.IdempotencyKey == "" {
		e.IdempotencyKey = e.EventID
	}
	e.ID, e.Type, e.TTL = "", "", 0
	return &e, nil
}
