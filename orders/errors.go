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
// between retrying and giving up.
type StoreError struct {
	Op        string // "create order", "read order", ...
	OrderID   string
	Status    int  // HTTP status from the store, 0 when there was no answer
	SubStatus int  // the store's sub-status, when it gave one (403/5301: role not yet granted)
	Transient bool // retrying later may succeed (throttling, outage, timeout)
	Err       error
}

func (e *StoreError) Error() string {
	return fmt.Sprintf("%s %s: %v", e.Op, e.OrderID, e.Err)
}

func (e *StoreError) Unwrap() error { return e.Err }

// IsTransient reports whether err is worth retrying by redelivery. Errors that
// are not StoreErrors are treated as transient: when in doubt, the broker keeps
// the message rather than losing it.
func IsTransient(err error) bool {
	var se *StoreError
	if errors.As(err, &se) {
		return se.Transient
	}
	return true
}
