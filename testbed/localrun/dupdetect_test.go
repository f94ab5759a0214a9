package localrun

import (
	"bytes"
	"slices"
	"testing"
	"time"

	"github.com/ordersink/orders-consumer/testbed/hostemu"
)

// With the producer rule for MessageId (docs/contract.md §3, ADR 0010) and
// the queue's duplicate detection on as in Azure, the broker drops only
// byte-identical resends; a resend with other content under the same orderId
// reaches the consumer inside the window and is parked as HashMismatch. With
// MessageId = orderId (ADR 0006) the broker dropped those mismatches unseen.
func TestEndToEndDuplicateDetectionLetsMismatchesThrough(t *testing.T) {
	const seed = 13
	s := stream(t, seed)
	rep := deliver(t, s, seed, Options{Functions: []string{"ProcessOrder"}, DuplicateDetection: 10 * time.Minute})
	if !rep.OK() {
		t.Fatal("the invariant does not hold")
	}
	if rep.MismatchesParked < s.Injected.Mismatches || rep.MismatchesParked != rep.MismatchDeliveries {
		t.Errorf("%d mismatch deliveries, %d parked; want every one of the %d injected inside the window parked",
			rep.MismatchDeliveries, rep.MismatchesParked, s.Injected.Mismatches)
	}
	if rep.StoredOrders != s.Injected.Orders {
		t.Errorf("stored %d orders, want %d", rep.StoredOrders, s.Injected.Orders)
	}
	if rep.Queue.Dropped == 0 {
		t.Fatal("duplicate detection dropped nothing: the stream's exact resends should have been")
	}
	// Every dropped message is a byte-for-byte copy of one the queue kept.
	for _, d := range s.Messages {
		copied := func(k *hostemu.Message) bool { return k.SequenceNumber != 0 && bytes.Equal(k.Body, d.Body) }
		if d.SequenceNumber == 0 && !slices.ContainsFunc(s.Messages, copied) {
			t.Errorf("dropped message %s carries content no kept message has: %.120s", d.MessageID, d.Body)
		}
	}
}
