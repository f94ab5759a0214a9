package verify

import (
	"testing"

	"github.com/ordersink/orders-consumer/idempotency"
)

func TestOutcomeLogCountsTakeoversAndFencing(t *testing.T) {
	l := NewOutcomeLog(nil)
	lines := `{"msg":"invocation","function":"SubmitOrder","outcome":"accepted","tookOver":true}
{"msg":"invocation","function":"SubmitOrder","outcome":"inFlight","err":"complete idempotency key abc: ` + idempotency.ErrFenced.Error() + `"}
{"msg":"invocation","function":"SubmitOrder","outcome":"unavailable","err":"create order WEB-1: 503"}
{"msg":"cosmos","tookOver":true}
`
	// Written in two pieces, cut mid-line, as a pipe delivers it.
	_, _ = l.Write([]byte(lines[:50]))
	_, _ = l.Write([]byte(lines[50:]))
	if took, fenced := l.KeyTakeovers(); took != 1 || fenced != 1 {
		t.Errorf("took over %d, fenced %d; want 1 and 1", took, fenced)
	}
	if o := l.Outcomes(); o["accepted"] != 1 || o["inFlight"] != 1 || o["unavailable"] != 1 {
		t.Errorf("outcomes %v", o)
	}
}
