package hostemu

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"time"
)

// Message is one Service Bus message as a producer sent it, plus the faults
// the emulated broker injects for it.
type Message struct {
	Body          []byte
	MessageID     string
	ContentType   string // "" = null
	CorrelationID string // "" = null
	Subject       string // "" = null; Label carries the same value
	// ApplicationProperties is a JSON object (or nil): native JSON types are
	// kept, as the host passes the dictionary through as an object.
	ApplicationProperties json.RawMessage
	TimeToLive            time.Duration // 0 = none: ExpiresAt is DateTime.MaxValue

	// LoseCompletions is how many successful completions of this message the
	// broker drops: the handler succeeded, the lock expires, the message is
	// delivered again with DeliveryCount+1.
	LoseCompletions int
	// Burst groups messages that are in flight at the same moment: adjacent
	// messages with the same non-zero Burst are handed to concurrent
	// invocations released together (a producer retry racing the original,
	// or a lock that expired under a slow invocation).
	Burst int

	// Set by the broker.
	SequenceNumber int64
	EnqueuedTime   time.Time
}

// Delivery is one delivery of a message: DeliveryCount is 1 the first time.
type Delivery struct {
	Message       *Message
	DeliveryCount int
	LockToken     string
	// LockedUntil is when the lock ends unless renewed (the queue's
	// LockDuration after the receive).
	LockedUntil time.Time
	entry       *entry
}

func (m *Message) expiresAt() time.Time {
	if m.TimeToLive <= 0 {
		return maxDateTime
	}
	return m.EnqueuedTime.Add(m.TimeToLive)
}

// newGUID returns a random (version 4) GUID in its usual text form.
func newGUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}
