package idempotency

import (
	"context"
	"errors"
	"time"
)

// State is where a key record is in its life: [Started] while an attempt
// runs the work, then [Succeeded] or [Failed] with the response to replay.
type State string

// The states of a key record.
const (
	Started   State = "started"
	Succeeded State = "succeeded"
	Failed    State = "failed" // the work refused the request; the refusal is replayed
)

// Response is what an attempt answered: it is stored with the record and
// replayed, byte for byte, to every retry with the same key and payload.
type Response struct {
	Status  int               `json:"status"`
	Headers map[string]string `json:"headers,omitempty"`
	Body    []byte            `json:"body,omitempty"` // exact bytes replayed (base64 in JSON)
}

// Record is the stored state of one key: one document per [Scope], whose id
// is [Scope.ID] (in Cosmos DB also the partition key value).
type Record struct {
	ID        string `json:"id"`
	Client    string `json:"client"`
	Operation string `json:"operation"`
	Key       string `json:"key"`
	// RequestHash is the fingerprint of the request's payload: a retry
	// with another payload is [Mismatched].
	RequestHash string `json:"requestHash"`
	// HashVersion is the rule RequestHash was computed with ([Fingerprint]);
	// 0 in a record stored before versions were kept: the first.
	HashVersion int   `json:"hashVersion,omitempty"`
	State       State `json:"state"`
	// Owner is a random token of the attempt that claimed or took over the
	// key, for logs and investigations; fencing is by ETag, not by owner.
	Owner string `json:"owner"`
	// LeaseUntil is when a Started record may be taken over.
	LeaseUntil time.Time `json:"leaseUntil,omitzero"`
	Response   *Response `json:"response,omitempty"`
	CreatedAt  time.Time `json:"createdAt"`
	UpdatedAt  time.Time `json:"updatedAt"`
	// TTL is the record's time to live in seconds, counted by the store
	// from its last write.
	TTL int64 `json:"ttl"`
	// ETag identifies the stored version; set by [Store.Read], never stored.
	ETag string `json:"-"`
}

// Store keeps key records. Every write is conditional, so two attempts can
// never both believe they own a key: Claim creates only when no record
// exists, Replace and Release act only on the version the caller read or
// wrote (its ETag). Errors other than the sentinels say whether a retry may
// help as a [KeyStoreError] does.
// Pattern: Standard package layout (docs/design-patterns.md#standard-package-layout).
type Store interface {
	// Claim creates the record and returns its ETag, or ErrExists when a
	// record with its id exists (whatever its state).
	Claim(ctx context.Context, r Record) (etag string, err error)
	// Read returns the record with its ETag, or ErrNotFound.
	Read(ctx context.Context, id string) (Record, error)
	// Replace writes r over the stored record if that is still the version
	// etag names, and returns the new ETag; ErrFenced when it is not (or
	// when no record is left).
	Replace(ctx context.Context, r Record, etag string) (string, error)
	// Release deletes the record if it is still the version etag names;
	// ErrFenced when it is not (or when no record is left).
	Release(ctx context.Context, id, etag string) error
}

// The conditional-write answers of a [Store].
var (
	// ErrExists: Claim found a record with that id (Cosmos DB: 409).
	ErrExists = errors.New("idempotency key record exists")
	// ErrNotFound: Read found no record (Cosmos DB: 404).
	ErrNotFound = errors.New("idempotency key record not found")
	// ErrFenced: the record is no longer the version the writer holds
	// (Cosmos DB: 412 Precondition Failed, or 404): another attempt took
	// the key over or completed it, and this write must not overwrite it.
	ErrFenced = errors.New("idempotency key record changed: this attempt lost its lease")
)
