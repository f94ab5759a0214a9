package orders

// DuplicateCause is why a message turned out to be a duplicate: the log field
// duplicateCause, so operators see whether duplicates come from the broker
// (redeliveries), from producers (resends) or from parallel consumers.
type DuplicateCause string

// The causes a duplicate is put down to, most specific first.
const (
	// CauseConcurrent: the stored order was accepted at or after the moment
	// this delivery tried to create it, so another delivery in flight at the
	// same time won the create. A race whose winner started a moment earlier
	// is put down to one of the causes below.
	CauseConcurrent DuplicateCause = "concurrentDelivery"
	// CauseRedelivery: the broker delivered the message that created the
	// order again (same MessageId, DeliveryCount above 1): a completion lost,
	// an invocation timed out or a lock expired after the write.
	CauseRedelivery DuplicateCause = "redelivery"
	// CauseResend: the producer sent the content again, under another
	// MessageId or as a new message under the same one.
	CauseResend DuplicateCause = "resend"
)

func duplicateCause(m Message, ours Acceptance, stored *StoredFingerprint) DuplicateCause {
	switch {
	case !stored.AcceptedAt.IsZero() && !stored.AcceptedAt.Before(ours.AcceptedAt):
		return CauseConcurrent
	case m.MessageID != "" && m.MessageID == stored.MessageID && m.DeliveryCount > 1:
		return CauseRedelivery
	default:
		return CauseResend
	}
}
