package idempotency

import "fmt"

// KeyStoreError is an error from the key store with enough context to decide
// between retrying and giving up. It answers as orders.StoreError does, by
// its Transient and StoreStatus methods, so that a caller of both stores asks
// once (orders.IsTransient); this package imports no other of the project.
type KeyStoreError struct {
	Op          string // "claim idempotency key", "read idempotency key", ...
	Key         string // the key record's id (Scope.ID)
	Status      int    // HTTP status from the store, 0 when there was no answer
	SubStatus   int    // the store's sub-status, when it gave one
	IsTransient bool   // retrying later may succeed (throttling, outage, timeout)
	Err         error
}

func (e *KeyStoreError) Error() string {
	return fmt.Sprintf("%s %s: %v", e.Op, e.Key, e.Err)
}

func (e *KeyStoreError) Unwrap() error { return e.Err }

// Transient reports whether retrying later may succeed.
func (e *KeyStoreError) Transient() bool { return e.IsTransient }

// StoreStatus is the status and sub-status the store answered, 0 when it
// gave no answer.
func (e *KeyStoreError) StoreStatus() (status, subStatus int) { return e.Status, e.SubStatus }
