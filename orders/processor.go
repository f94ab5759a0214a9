package orders

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// StoredFingerprint is the fingerprint of an order that already exists.
type StoredFingerprint struct {
	Hash    string
	Version int
	// MessageID and AcceptedAt are the stored acceptance (contract §5); they
	// tell why a duplicate happened. Zero when the document lacks them.
	MessageID  string
	AcceptedAt time.Time
	// Owner and SubmissionID are the stored order's, set when it came
	// through the HTTP API ([Submission]); empty for the queue path's.
	Owner, SubmissionID string
	// Document is the stored order document as read: what the HTTP API
	// answers with ([PublicView]).
	Document json.RawMessage
}

// ParseStoredFingerprint reads the fingerprint of a stored order document.
// A document without requestHash was not written by this consumer; the
// processor reports it as a mismatch. messageId and acceptedAt only explain a
// duplicate: a document written by someone else may lack them or spell them
// otherwise without failing the read.
func ParseStoredFingerprint(doc []byte) (*StoredFingerprint, error) {
	var stored struct {
		RequestHash string `json:"requestHash"`
		HashVersion int    `json:"hashVersion"`
		MessageID   any    `json:"messageId"`
		AcceptedAt  any    `json:"acceptedAt"`
		Owner       any    `json:"owner"`
		Submission  any    `json:"submissionId"`
	}
	if err := json.Unmarshal(doc, &stored); err != nil {
		return nil, fmt.Errorf("stored document is not JSON: %w", err)
	}
	fp := &StoredFingerprint{Hash: stored.RequestHash, Version: stored.HashVersion, Document: doc}
	fp.MessageID, _ = stored.MessageID.(string)
	fp.Owner, _ = stored.Owner.(string)
	fp.SubmissionID, _ = stored.Submission.(string)
	if s, ok := stored.AcceptedAt.(string); ok {
		fp.AcceptedAt, _ = time.Parse(time.RFC3339Nano, s)
	}
	return fp, nil
}

// Store is what the consumer needs from the database.
// Pattern: Standard package layout (docs/design-patterns.md#standard-package-layout).
type Store interface {
	// CreateOrder writes the documents of b (the order, then its
	// OrderAccepted outbox event) as they are, all or nothing, unless the
	// order exists. It returns nil when it created them, and the stored
	// fingerprint when the order was there already; then nothing was
	// written. The create is the duplicate check: there is no read before
	// it. A [StoreError] that is not Transient means the write can never
	// succeed (for example it exceeds a store limit).
	CreateOrder(ctx context.Context, b *AcceptanceBatch) (*StoredFingerprint, error)
	// RecordConflict adds a conflict record beside the stored order. Recording
	// the same conflict twice is not an error.
	RecordConflict(ctx context.Context, c Conflict) error
}

// OrderReader reads the order stored under an orderId: the HTTP API's
// GetOrder, and the processor's look at an order accepted before when the
// rules refuse a body. cosmos.Store and orderstest.MemStore implement it.
type OrderReader interface {
	// ReadOrder returns the order document of orderID as stored, nil when
	// there is none.
	ReadOrder(ctx context.Context, orderID string) (json.RawMessage, error)
}

// DefaultRetryBudget is the DeliveryCount from which a transient failure is
// parked instead of retried: one below the queue's default maxDeliveryCount
// of 10, so the consumer parks with a reason before the broker dead-letters
// without one. With a retrying store each delivery first holds until the
// invocation's deadline, so the budget spans budget × deadline of outage.
const DefaultRetryBudget = 9

// Processor turns one message into one Result (docs/contract.md §5).
// Pattern: Idempotent receiver (docs/design-patterns.md#idempotent-receiver).
type Processor struct {
	Store Store
	// Statuses applies OrderStatusChanged messages; nil means Store, when it
	// is a [StatusStore] too.
	Statuses StatusStore
	// Reader, when set, reads the order stored under a refused body's
	// orderId: a message whose content is stored (a resend, a redelivery
	// after a rule was tightened or a setting lowered) is a duplicate, not a
	// refusal (docs/adr/0015-the-key-first.md).
	Reader OrderReader
	// RetryBudget: a transient failure at DeliveryCount >= RetryBudget is
	// parked as Exhausted. Zero means DefaultRetryBudget.
	RetryBudget int
	// Now returns the current time; nil means time.Now.
	Now func() time.Time
	// EventBudget, when set, refuses an order whose OrderAccepted event
	// would not fit one message of the events topic (docs/contract.md §3, rule
	// "event size"; docs/adr/0009-output-size-budgets.md). It is given the
	// event as the publisher will send it ([AcceptanceBatch.Event]).
	EventBudget func(event json.RawMessage) error
}

// Message is one delivery of an order message.
type Message struct {
	Body          []byte
	MessageID     string
	DeliveryCount int
	// Type is the Service Bus Subject as sent; empty means an order (see
	// [ParseMessageType]).
	Type MessageType
}

// Process decides what a delivery amounts to and performs the writes that go
// with it. It never panics on bad input and never returns Transient for a
// body that will be rejected again on the next delivery. Store failures are
// retried only as far as Store does: a retrying store retries them until
// ctx's deadline.
func (p *Processor) Process(ctx context.Context, m Message) Result {
	if ParseMessageType(string(m.Type)) == OrderStatusChanged {
		return p.processStatus(ctx, m)
	}
	o, err := ParseOrder(m.Body)
	if err != nil {
		return p.refused(ctx, m, err)
	}
	a := Acceptance{MessageID: m.MessageID, AcceptedAt: p.now()}
	b, err := p.acceptance(o, a)
	if err != nil {
		return p.refused(ctx, m, err)
	}
	r := Result{Kind: OrderPlaced, OrderID: o.ID, IncomingHash: o.Hash, MessageIDDiffers: messageIDDiffers(m, o.ID)}

	stored, err := p.Store.CreateOrder(ctx, b)
	if err != nil {
		return p.failed(r, m, err)
	}
	if stored == nil {
		r.Outcome = Created
		return r
	}
	r.StoredHash = stored.Hash
	same, err := sameFingerprint(o, stored)
	if err != nil {
		r.Outcome, r.Reason = Mismatch, HashMismatch
		r.Description = fmt.Sprintf("orderId %s exists, and its content cannot be compared: %v", o.ID, err)
		return r
	}
	if same {
		r.Outcome, r.DuplicateCause = Duplicate, duplicateCause(m, a, stored)
		return r
	}
	c := Conflict{OrderID: o.ID, MessageID: m.MessageID, StoredHash: stored.Hash, IncomingHash: o.Hash, Body: string(m.Body), DetectedAt: p.now()}
	err = p.Store.RecordConflict(ctx, c)
	if err != nil && IsTransient(err) && !p.LastAttempt(m.DeliveryCount) {
		// Retry while deliveries remain, so the record gets written.
		return p.failed(r, m, err)
	}
	r.Outcome, r.Reason = Mismatch, HashMismatch
	r.Description = fmt.Sprintf("orderId %s was already accepted with a different payload", o.ID)
	if err != nil {
		// The outcome is known; only its record is missing. Parking it as
		// what it is keeps the HashMismatch alarm true.
		r.Err = err
		r.Description += fmt.Sprintf(" (the conflict record was not written: %v)", err)
	}
	return r
}

// acceptance builds what accepting the order writes, once per delivery
// (a retrying store resends the same batch), and refuses an order whose
// OrderAccepted event could never be published: the publisher would have to
// set it aside (docs/contract.md §3, event size;
// docs/adr/0009-output-size-budgets.md). Duplicates pass here too, because
// the create is the duplicate check and its batch carries the documents; a
// resend whose event breaks a budget lowered since is a duplicate all the
// same (refused, then found stored).
func (p *Processor) acceptance(o *Order, a Acceptance) (*AcceptanceBatch, error) {
	b, err := o.AcceptanceDocuments(a)
	if err != nil {
		return nil, err
	}
	if p.EventBudget == nil {
		return b, nil
	}
	if err := p.EventBudget(b.Event); err != nil {
		return nil, invalid("", "its %s event would be %v; it carries the order's lines as sent, so send fewer or smaller unknown line members (docs/contract.md §3, event size)", EventOrderAccepted, err)
	}
	return b, nil
}

// messageIDDiffers reports a MessageId set by neither rule of docs/contract.md §3:
// the current one (MessageID) nor the first version's plain orderId.
func messageIDDiffers(m Message, orderID string) bool {
	return m.MessageID != "" && m.MessageID != orderID && m.MessageID != MessageID(orderID, m.Body)
}

// refused is the result of a body the rules refuse: Invalid, unless its
// orderId holds this very content, which the rules accepted when it came
// first: then it is a Duplicate, as its first delivery's redelivery would
// have been. The judgement of an order already stored never depends on a
// rule or setting that changed since. A failed read is a store failure:
// the message is retried rather than parked.
func (p *Processor) refused(ctx context.Context, m Message, err error) Result {
	res := rejected(err, m.Body)
	if p.Reader == nil || res.Reason != ValidationFailed || CheckOrderID(res.OrderID) != nil {
		return res
	}
	doc, rerr := p.Reader.ReadOrder(ctx, res.OrderID)
	if rerr != nil {
		return p.failed(Result{Kind: OrderPlaced, OrderID: res.OrderID}, m, rerr)
	}
	if doc == nil {
		return res
	}
	stored, perr := ParseStoredFingerprint(doc)
	if perr != nil {
		return res
	}
	pl := ReadPayload(m.Body)
	if same, _ := sameHash(pl.Hash, pl.HashUnder, stored); !same {
		return res
	}
	return Result{Kind: OrderPlaced, Outcome: Duplicate, OrderID: res.OrderID, IncomingHash: pl.Hash, StoredHash: stored.Hash,
		MessageIDDiffers: messageIDDiffers(m, res.OrderID), DuplicateCause: duplicateCause(m, Acceptance{MessageID: m.MessageID}, stored)}
}

// rejected is the Invalid result for a body that will be refused on every
// delivery.
func rejected(err error, body []byte) Result {
	var re *RejectError
	if !errors.As(err, &re) {
		re = &RejectError{Reason: MalformedMessage, Msg: err.Error()}
	}
	return Result{Outcome: Invalid, Reason: re.Reason, Description: re.Error(), OrderID: PeekOrderID(body)}
}

func (p *Processor) failed(r Result, m Message, err error) Result {
	r.Err = err
	if !IsTransient(err) {
		r.Outcome, r.Reason = Invalid, ValidationFailed
		r.Description = fmt.Sprintf("the store refused the order: %v", err)
		return r
	}
	if p.LastAttempt(m.DeliveryCount) {
		r.Outcome, r.Reason = Exhausted, RetryBudgetExhausted
		r.Description = fmt.Sprintf("still failing at delivery %d (budget %d): %v", m.DeliveryCount, p.budget(), err)
		return r
	}
	r.Outcome = Transient
	r.Description = err.Error()
	return r
}

// LastAttempt reports whether a transient failure at this DeliveryCount is
// parked as Exhausted rather than retried.
// Pattern: Parking with a reason (docs/design-patterns.md#parking-with-a-reason).
func (p *Processor) LastAttempt(deliveryCount int) bool { return deliveryCount >= p.budget() }

func (p *Processor) budget() int {
	if p.RetryBudget <= 0 {
		return DefaultRetryBudget
	}
	return p.RetryBudget
}

func (p *Processor) now() time.Time {
	if p.Now != nil {
		return p.Now()
	}
	return time.Now()
}
