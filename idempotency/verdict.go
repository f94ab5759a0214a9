package idempotency

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Verdict is what [Service.Execute] made of a request.
type Verdict int

// The verdicts of Execute. The zero Verdict is none of them.
const (
	// Executed: this request claimed the key (or took it over) and ran
	// the work; Response is the work's answer, now stored.
	Executed Verdict = iota + 1
	// Replayed: an earlier request with the same key and payload finished;
	// Response is its stored answer. Nothing ran.
	Replayed
	// Mismatched: the key was used with another payload. Nothing ran.
	Mismatched
	// InFlight: an earlier request with the same key is still running and
	// its lease has not ended; RetryAfter says when it will have. Nothing ran.
	InFlight
)

func (o Verdict) String() string {
	switch o {
	case Executed:
		return "executed"
	case Replayed:
		return "replayed"
	case Mismatched:
		return "mismatch"
	case InFlight:
		return "inFlight"
	}
	return "unknown"
}

// Execution is what [Service.Execute] made of a request: its Verdict and,
// for Executed and Replayed, the Response to give.
type Execution struct {
	Verdict  Verdict
	Response Response // Executed, Replayed: the answer to give
	// RetryAfter is, for InFlight, how long until the running attempt's
	// lease ends, in whole seconds and at least one (an HTTP Retry-After).
	RetryAfter time.Duration
	// TookOver: Executed after taking over a Started record whose lease
	// had ended (its attempt died or hung).
	TookOver bool
}

// Fingerprint identifies a request's payload under a versioned rule. A
// record keeps the version it was stored with, and a retry is compared
// under that version: a release that changes the rule still recognises the
// retries of keys its predecessor stored, rather than refusing every one of
// them as [Mismatched].
type Fingerprint struct {
	Hash string
	// Version of the rule Hash was computed with; 0 means 1, the first.
	Version int
	// Under computes the payload's fingerprint under another version of the
	// rule; nil when the caller knows no other.
	Under func(version int) (string, error)
}

// matches reports whether a record stored with hash under version was
// stored for this payload.
func (f Fingerprint) matches(hash string, version int) bool {
	version = max(version, 1) // a record without a version was stored under the first
	if version == max(f.Version, 1) {
		return hash == f.Hash
	}
	if f.Under == nil {
		return false
	}
	h, err := f.Under(version)
	return err == nil && h == hash
}

// Work runs the side effect a key guards. It returns the response to store
// and give: (resp, nil) completes the key as [Succeeded]; an error made by
// [ClientError] completes it as [Failed] with that error's response, which
// retries get replayed; any other error releases the key, so that a retry
// runs the work again, and is returned by Execute.
type Work func(ctx context.Context) (Response, error)

// ClientError says that the work refused the request for good (the same
// request would be refused again): r is stored and replayed.
func ClientError(r Response) error { return &clientError{resp: r} }

type clientError struct{ resp Response }

func (e *clientError) Error() string { return fmt.Sprintf("client error %d", e.resp.Status) }

// clientResponse returns the response of a ClientError in err's chain.
func clientResponse(err error) (Response, bool) {
	var ce *clientError
	if errors.As(err, &ce) {
		return ce.resp, true
	}
	return Response{}, false
}
