package orders

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/go-json-experiment/json/jsontext"
)

// Submission names an order submitted through the HTTP API: the client that
// owns it and the request that submits it. The stored order keeps both
// (owner, submissionId), so that only its owner reads it, and so that the
// retry of a request that died after creating the order can tell its own
// order from a resend (docs/contract.md §5).
type Submission struct {
	// Owner is the client scope of the HTTP API ("principal:…", "key:…"
	// or "anonymous").
	Owner string
	// ID is the id of the idempotency key record of the request.
	ID string
}

// Admit judges a body as [Processor.Process] does before it writes anything:
// the rules of docs/contract.md §3, the event size included, for the order
// as a producer sends it (MessageId by [MessageID]). SubmitOrder admits its
// bodies with it, so an order is refused alike whichever way it comes in.
// It returns the order and what accepting it for s writes. The error is a
// *[RejectError], as ParseOrder's.
func (p *Processor) Admit(body []byte, s Submission) (*Order, *AcceptanceBatch, error) {
	o, err := ParseOrder(body)
	if err != nil {
		return nil, nil, err
	}
	b, err := p.acceptance(o, Acceptance{MessageID: MessageID(o.ID, body), AcceptedAt: p.now(), Submission: s})
	if err != nil {
		return nil, nil, err
	}
	return o, b, nil
}

// SubmitOutcome is what [Processor.Submit] made of a submission.
type SubmitOutcome int

// The outcomes of Submit.
const (
	// SubmitCreated: this call created the order and its event.
	SubmitCreated SubmitOutcome = iota + 1
	// SubmitResumed: the order exists with this owner, content and
	// submission: an earlier attempt of this very request created it and
	// died before it could answer. Nothing was written.
	SubmitResumed
	// SubmitResent: the order exists with this owner and content, from
	// another submission (a resend under a new key). Nothing was written.
	SubmitResent
	// SubmitTaken: the orderId is held by another client, by the queue
	// path, or by this owner with other content. Nothing was written.
	SubmitTaken
)

// Submitted is the decision of [Processor.Submit].
type Submitted struct {
	Outcome SubmitOutcome
	// Document is the stored order document: the one written
	// (SubmitCreated) or the one found; never shown for SubmitTaken.
	Document json.RawMessage
	// StoredHash is the stored order's fingerprint (SubmitTaken).
	StoredHash string
	// SameOwner: the stored order belongs to the submitting client.
	SameOwner bool
}

// Submit creates an admitted order (o, b from [Processor.Admit]) for s in
// one transactional batch, as [Processor.Process] does for the queue path,
// and decides from the stored order when it exists: there is no read before
// the create. Unlike the queue path, nothing is recorded for another
// client's order or other content: the answer tells the caller, who is
// there to read it. The error is the store's.
func (p *Processor) Submit(ctx context.Context, o *Order, b *AcceptanceBatch, s Submission) (Submitted, error) {
	stored, err := p.Store.CreateOrder(ctx, b)
	if err != nil {
		return Submitted{}, err
	}
	if stored == nil {
		return Submitted{Outcome: SubmitCreated, Document: b.Documents[0].Body}, nil
	}
	r := Submitted{Outcome: SubmitTaken, Document: stored.Document, StoredHash: stored.Hash, SameOwner: stored.Owner != "" && stored.Owner == s.Owner}
	if !r.SameOwner {
		return r, nil
	}
	if same, err := sameFingerprint(o, stored); err != nil || !same {
		return r, nil // content that cannot be compared is not the same
	}
	if stored.SubmissionID == s.ID {
		r.Outcome = SubmitResumed
	} else {
		r.Outcome = SubmitResent
	}
	return r, nil
}

// sameFingerprint compares an order with a stored fingerprint under the
// rule version the stored one was computed with.
func sameFingerprint(o *Order, stored *StoredFingerprint) (bool, error) {
	if stored.Hash == "" {
		return false, fmt.Errorf("the stored document has no requestHash: it was not written by this consumer")
	}
	// Version 0 is a document without hashVersion: the first rule is meant.
	if stored.Version == HashVersion || stored.Version == 0 {
		return stored.Hash == o.Hash, nil
	}
	h, err := fingerprint(o.fields, stored.Version)
	if err != nil {
		return false, err
	}
	return h == stored.Hash, nil
}

// private are the members of a stored order document the HTTP API never
// shows: the store's bookkeeping, who owns the order and by which request,
// and Cosmos DB's system properties.
var private = []string{"id", "type", "messageId", "owner", "submissionId",
	"_rid", "_self", "_etag", "_attachments", "_ts"}

// PublicView is a stored order document as the HTTP API shows it to its
// owner (docs/http-api.md): the members the client sent, with requestHash,
// hashVersion and acceptedAt, in the RFC 8785 canonical form (names sorted,
// numbers and strings written one way). Every answer that carries an order
// is built by it, and the canonical form makes them the same bytes whether
// they are built from the document as written or as the store gives it back,
// which may reprint numbers and escapes and reorder members (a created
// order's 201, a resend's 200, a GET).
func PublicView(doc []byte) ([]byte, error) {
	var members map[string]json.RawMessage
	if err := json.Unmarshal(doc, &members); err != nil {
		return nil, fmt.Errorf("stored order document is not a JSON object: %w", err)
	}
	for _, k := range private {
		delete(members, k)
	}
	var b bytes.Buffer
	b.Grow(len(doc))
	b.WriteByte('{')
	for i, k := range slices.Sorted(maps.Keys(members)) {
		if i > 0 {
			b.WriteByte(',')
		}
		appendString(&b, k)
		b.WriteByte(':')
		b.Write(members[k])
	}
	b.WriteByte('}')
	view := jsontext.Value(b.Bytes())
	if err := view.Canonicalize(); err != nil {
		return nil, fmt.Errorf("stored order document cannot be canonicalised (RFC 8785): %w", err)
	}
	return view, nil
}
