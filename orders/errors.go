package orders

import (
	"errors"
	"fmt"
)

// RejectError says why a message body cannot be accepted. It is final: the
// same body is rejected on every delivery, so the message is parked at once.
type RejectError struct {
	Reason Reason // MalformedMessage or ValidationFailed
	Field  string // the offending field, when there is one
	Msg    string
}

func (e *RejectError) Error() string {
	if e.Field == "" {
		return e.Msg
	}
	return e.Field + ": " + e.Msg
}

func malformed(format string, args ...any) *RejectError {
	return &RejectError{Reason: MalformedMessage, Msg: fmt.Sprintf(format, args...)}
}

func invalid(field, format string, args ...any) *RejectError {
	return &RejectError{Reason: ValidationFailed, Field: field, Msg: fmt.Sprintf(format, args...)}
}

// StoreError is an error from the order store with enough context to decide
// between retrying and giving up. The key store's error,
// idempotency.KeyStoreError, answers the same two questions through the same
// methods, Transient and StoreStatus, so a caller that meets both stores
// asks the behaviour once, as net.Error's Timeout is asked of *net.OpError
// and *url.Error alike. The types stay two because neither package may
// import the other, nor a third (internal/layering).
type StoreError struct {
	Op          string // "create order", "read order", ...
	OrderID     string
	Status      int  // HTTP status from the store, 0 when there was no answer
	SubStatus   int  // the store's sub-status, when it gave one (403/5301: role not yet granted)
	IsTransient bool // retrying later may succeed (throttling, outage, timeout)
	Err         error
}

func (e *StoreError) Error() string {
	return fmt.Sprintf("%s %s: %v", e.Op, e.OrderID, e.Err)
}

func (e *StoreError) Unwrap() error { return e.Err }

// Transient reports whether retrying later may succeed.
func (e *StoreError) Transient() bool { return e.IsTransient }

// StoreStatus is the status and sub-status the store answered, 0 when it
// gave no answer.
func (e *StoreError) StoreStatus() (status, subStatus int) { return e.Status, e.SubStatus }

// IsTransient reports whether err is worth retrying by redelivery: the
// answer of the first error in its chain with a Transient method, whichever
// store's it is. Other errors count as transient: when in doubt, the broker
// keeps the message rather than losing it.
func IsTransient(err error) bool {
	var t interface{ Transient() bool }
	if errors.As(err, &t) {
		return t.Transient()
	}
	return true
}
