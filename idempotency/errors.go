package idempotency

import (
	"errors"
	"fmt"
)

// StoreError is an error from the key store with enough context to decide
// between retrying and giving up.
type StoreError struct {
	Op        string // "claim idempotency key", "read idempotency key", ...
	Key       string // the key record's id (Scope.ID)
	Status    int    // HTTP status from the store, 0 when there was no answer
	SubStatus int    // the store's sub-status, when it gave one
	Transient bool   // retrying later may succeed (throttling, outage, timeout)
	Err       error
}

func (e *StoreError) Error() string {
	return fmt.Sprintf("%s %s: %v", e.Op, e.Key, e.Err)
}

func (e *StoreError) Unwrap() error { return e.Err }

// IsTransient reports whether a retry of the request may succeed, as far as
// the key store can tell: a StoreError says so; other errors (the work's
// own, which carry their own verdict) count as transient here.
func IsTransient(err error) bool {
	var se *StoreError
	if errors.As(err, &se) {
		return se.Transient
	}
	return true
}
