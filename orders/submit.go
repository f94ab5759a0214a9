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

// Admit applies the rules of docs/contract.md §3 to a submitted payload as
// [Processor.Process] does to a message before it writes anything, the
// event size included, for the order as a producer sends it (MessageId by
// [MessageID]); so an order is refused alike whichever way it comes in. It
// returns the order and what accepting it for s writes. The error is a
// *[RejectError], as ParseOrder's.
func (p *Processor) Admit(pl *Payload, s Submission) (*Order, *AcceptanceBatch, error) {
	o, err := pl.order()
	if err != nil {
		return nil, nil, err
	}
	b, err := p.acceptance(o, Acceptance{MessageID: MessageID(o.ID, pl.body), AcceptedAt: p.now(), Submission: s})
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
	// SubmitKnown: the order exists with this content and another owner:
	// the queue path accepted it (a producer that fell back from the queue
	// to the HTTP API), or a client whose scope changed since (a renamed
	// key, authentication switched on) sent it. The real-world order is
	// stored once; nothing was written.
	SubmitKnown
	// SubmitTaken: the orderId holds other content. Nothing was written.
	SubmitTaken
)

// Submitted is the decision of [Processor.Submit].
type Submitted struct {
	Outcome SubmitOutcome
	// Document is the stored order document: the one written
	// (SubmitCreated) or the one found; shown only to its owner.
	Document json.RawMessage
	// StoredHash is the stored order's fingerprint.
	StoredHash string
	// HashVersion is the rule StoredHash was computed with.
	HashVersion int
	// SameOwner: the stored order belongs to the submitting client.
	SameOwner bool
}

// Submit creates an admitted order (o, b from [Processor.Admit]) for s in
// one transactional batch, as [Processor.Process] does for the queue path,
// and decides from the stored order when it exists ([Payload.Against]):
// there is no read before the create. Unlike the queue path, nothing is
// recorded for other content: the answer tells the caller, who is there to
// read it. The error is the store's.
func (p *Processor) Submit(ctx context.Context, o *Order, b *AcceptanceBatch, s Submission) (Submitted, error) {
	stored, err := p.Store.CreateOrder(ctx, b)
	if err != nil {
		return Submitted{}, err
	}
	if stored == nil {
		return Submitted{Outcome: SubmitCreated, Document: b.Documents[0].Body, StoredHash: o.Hash, HashVersion: HashVersion, SameOwner: true}, nil
	}
	return against(o.Hash, func(v int) (string, error) { return fingerprint(o.fields, v) }, stored, s), nil
}

// Against decides a submission from the order stored under its orderId
// (doc as the store returns it): the same content is the same real-world
// order whoever stored it (resumed, resent or known), other content is
// taken. SubmitOrder asks it when the rules refuse a body, so that an order
// accepted before is answered as accepted whatever the rules say now.
func (pl *Payload) Against(doc json.RawMessage, s Submission) (Submitted, error) {
	stored, err := ParseStoredFingerprint(doc)
	if err != nil {
		return Submitted{}, err
	}
	return against(pl.Hash, pl.HashUnder, stored, s), nil
}

// against is the decision of Against and Submit: hash is the submission's
// fingerprint under HashVersion, under computes it under another version.
func against(hash string, under func(int) (string, error), stored *StoredFingerprint, s Submission) Submitted {
	r := Submitted{Outcome: SubmitTaken, Document: stored.Document, StoredHash: stored.Hash,
		HashVersion: max(stored.Version, 1), SameOwner: stored.Owner != "" && stored.Owner == s.Owner}
	if same, err := sameHash(hash, under, stored); err != nil || !same {
		return r // content that cannot be compared is not the same
	}
	switch {
	case !r.SameOwner:
		r.Outcome = SubmitKnown
	case stored.SubmissionID == s.ID:
		r.Outcome = SubmitResumed
	default:
		r.Outcome = SubmitResent
	}
	return r
}

// sameFingerprint compares an order with a stored fingerprint under the
// rule version the stored one was computed with.
func sameFingerprint(o *Order, stored *StoredFingerprint) (bool, error) {
	return sameHash(o.Hash, func(v int) (string, error) { return fingerprint(o.fields, v) }, stored)
}

// sameHash compares a fingerprint (hash under HashVersion, under for any
// other version) with a stored one under the stored one's version.
func sameHash(hash string, under func(int) (string, error), stored *StoredFingerprint) (bool, error) {
	if stored.Hash == "" {
		return false, fmt.Errorf("the stored document has no requestHash: it was not written by this consumer")
	}
	// Version 0 is a document without hashVersion: the first rule is meant.
	if stored.Version == HashVersion || stored.Version == 0 {
		return stored.Hash == hash, nil
	}
	h, err := under(stored.Version)
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
