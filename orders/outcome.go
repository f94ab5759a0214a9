package orders

// Outcome is what processing one message amounted to (docs/contract.md §5).
type Outcome string

// The outcomes of docs/contract.md §5, plus Stale for absolute-state updates.
const (
	Created   Outcome = "created"
	Duplicate Outcome = "duplicate"
	Mismatch  Outcome = "mismatch"
	Invalid   Outcome = "invalid"
	Transient Outcome = "transient"
	Exhausted Outcome = "exhausted"
	// Applied: an OrderStatusChanged message became the stored status.
	Applied Outcome = "applied"
	// Stale: an OrderStatusChanged message was not newer than the stored
	// status; nothing was written.
	Stale Outcome = "stale"
)

// Reason names why a message was parked (docs/contract.md §6).
type Reason string

// The parking reasons of docs/contract.md §6.
const (
	HashMismatch         Reason = "HashMismatch"
	ValidationFailed     Reason = "ValidationFailed"
	MalformedMessage     Reason = "MalformedMessage"
	RetryBudgetExhausted Reason = "RetryBudgetExhausted"
	// Unpublishable: an outbox event document the publisher can never send
	// (malformed, or over the message size limit), set aside so it does not
	// block its lease or its batch-mates.
	Unpublishable Reason = "Unpublishable"
)

// Completes reports whether the broker should complete the message: every
// outcome but Transient is final for this delivery.
func (o Outcome) Completes() bool { return o != Transient }

// Parks reports whether the message must be written to the parking queue.
func (o Outcome) Parks() bool { return o == Mismatch || o == Invalid || o == Exhausted }

// Result is the decision for one message.
type Result struct {
	Outcome      Outcome
	Reason       Reason // set when Outcome.Parks()
	Description  string // a sentence a person can act on
	OrderID      string // empty when the body had no usable orderId
	StoredHash   string // set for Duplicate and Mismatch
	IncomingHash string // set once the body was fingerprinted
	// MessageIDDiffers is true when the Service Bus MessageId follows
	// neither rule of contract §3 (orderId, or orderId and body hash); the
	// message is still deduplicated by orderId.
	MessageIDDiffers bool
	// DuplicateCause says why a Duplicate happened, for operators.
	DuplicateCause DuplicateCause
	// RequestCharge is the request units the store reported for this
	// message (requestcharge.Counter), 0 when it reports none.
	RequestCharge float64
	Err           error // the cause of Transient and Exhausted

	// Kind is the message type once known.
	Kind MessageType
	// Version and StoredVersion are set for OrderStatusChanged: the incoming
	// version and the one stored before (0 when there was none).
	Version, StoredVersion int64
	// VersionConflict: a Stale message carried another status under the
	// stored version.
	VersionConflict bool
	// Attempts counts conditional status writes, lost races included.
	Attempts int
}
