package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"
)

// parkedDeadLetterFake is the parking queue's own dead-letter queue with
// two envelopes the broker moved there.
func parkedDeadLetterFake(t *testing.T) *fakeQueue {
	q := newFakeQueue(
		envelopeMessage(t, map[string]any{"reason": "RetryBudgetExhausted", "orderId": "ORD-7", "messageId": "ORD-7:1", "body": `{"orderId":"ORD-7"}`}),
		envelopeMessage(t, map[string]any{"reason": "HashMismatch", "orderId": "ORD-8", "messageId": "ORD-8:1", "body": `{"orderId":"ORD-8"}`}),
	)
	for _, m := range q.msgs {
		m.DeadLetterReason, m.DeadLetterErrorDescription = to.Ptr("MaxDeliveryCountExceeded"), to.Ptr("Message could not be consumed after 10 delivery attempts.")
		m.DeliveryCount = 10
	}
	return q
}

// Envelopes the broker moved out of the parking queue stay in sight: listed
// with the broker's reason beside the parking reason, resubmitted and
// completed from their own queue, which --from names.
func TestParkedDeadLetterQueue(t *testing.T) {
	parking, pdl, snd := parkingQueueFake(t), parkedDeadLetterFake(t), &fakeSender{}
	vars := withAzureQueues(t, parking, newFakeQueue(), pdl, snd)

	code, out, errs := ctlEnv(t, vars, "parked", "list", "--from", "parked-deadletter", "--output", "json")
	var got []Parked
	if code != exitOK || json.Unmarshal([]byte(out), &got) != nil {
		t.Fatalf("list: exit %d: %s\n%s", code, errs, out)
	}
	if len(got) != 2 || got[0].Queue != parkedDeadLetterQueue || got[0].OrderID != "ORD-7" || got[0].Reason != "RetryBudgetExhausted" ||
		!strings.HasPrefix(got[0].BrokerReason, "MaxDeliveryCountExceeded: Message could not") {
		t.Fatalf("listed %+v", got)
	}
	if code, out, _ := ctlEnv(t, vars, "parked", "show", "ORD-7"); code != exitOK || !strings.Contains(out, "dead-lettered:  MaxDeliveryCountExceeded") {
		t.Errorf("show: exit %d\n%s", code, out)
	}
	if code, out, _ := ctlEnv(t, vars, "parked", "list"); code != exitOK || !strings.Contains(out, "parked-deadletter") || !strings.Contains(out, "6 message(s)") {
		t.Errorf("the full list leaves out the parked-deadletter queue: exit %d\n%s", code, out)
	}

	code, out, errs = ctlEnv(t, vars, "parked", "resubmit", "--yes", "--from", "parked-deadletter", "--output", "json")
	if r := decodeResult(t, out); code != exitOK || r.Summary.Done != 2 || len(snd.sent) != 2 || !slices.Equal(pdl.completed, []int64{1, 2}) || len(parking.completed) != 0 {
		t.Fatalf("resubmit: exit %d (%s), %+v, sent %d, completed %v / parking %v", code, errs, r.Summary, len(snd.sent), pdl.completed, parking.completed)
	}
	if !strings.Contains(errs, "HashMismatch messages are refused again") {
		t.Errorf("no warning for a HashMismatch resubmitted from parked-deadletter: %q", errs)
	}

	pdl = parkedDeadLetterFake(t)
	vars = withAzureQueues(t, parkingQueueFake(t), newFakeQueue(), pdl, snd)
	if code, _, errs := ctlEnv(t, vars, "parked", "complete", "--yes", "--from", "parked-deadletter", "ORD-8"); code != exitOK || !slices.Equal(pdl.completed, []int64{2}) {
		t.Errorf("complete: exit %d (%s), completed %v", code, errs, pdl.completed)
	}
	if code, _, errs := ctlEnv(t, vars, "parked", "complete", "--yes", "--from", "elsewhere", "ORD-8"); code != exitUsage || !strings.Contains(errs, "parked-deadletter") {
		t.Errorf("unknown queue: exit %d, %q", code, errs)
	}
	// The local host emulator never dead-letters its parking queue.
	if code, _, errs := ctl(t, "parked", "complete", "--local", localCopy(t), "--yes", "--from", "parked-deadletter", "ORD-1"); code != exitNotFound {
		t.Errorf("local parked-deadletter: exit %d (%s), want %d", code, errs, exitNotFound)
	}
}

// Resubmitting sends orders to the consumer again: like complete, it asks
// first, off a terminal it needs --yes, and "no" changes nothing.
func TestResubmitAsksForConfirmation(t *testing.T) {
	q, snd := parkingQueueFake(t), &fakeSender{}
	vars := withAzure(t, q, newFakeQueue(), snd)
	if code, _, errs := ctlEnv(t, vars, "parked", "resubmit"); code != exitUsage || !strings.Contains(errs, "--yes") || len(snd.sent) != 0 || q.receives != 0 {
		t.Fatalf("off a terminal without --yes: exit %d (%s), sent %d, receives %d", code, errs, len(snd.sent), q.receives)
	}
	var asked []string
	no := session{env: vars, confirm: func(q string) bool { asked = append(asked, q); return false }}
	if code, _, _ := no.ctl(t, "parked", "resubmit"); code != exitDeclined || len(snd.sent) != 0 || q.receives != 0 {
		t.Fatalf("declined: exit %d, sent %d, receives %d", code, len(snd.sent), q.receives)
	}
	if len(asked) != 1 || !strings.Contains(asked[0], "resubmit these 2 message(s) in the parking queue") {
		t.Errorf("asked %q", asked)
	}
	yes := session{env: vars, confirm: func(string) bool { return true }}
	if code, _, errs := yes.ctl(t, "parked", "resubmit"); code != exitError || len(snd.sent) != 2 { // ORD-4 is truncated: skipped
		t.Errorf("agreed: exit %d (%s), sent %d", code, errs, len(snd.sent))
	}
}

// A filter that matches nothing is exit 3 for every change, so a script
// never takes a mistyped reason or order for an empty queue.
func TestAChangeThatMatchesNothingExits3(t *testing.T) {
	vars := withAzure(t, parkingQueueFake(t), newFakeQueue(), &fakeSender{})
	for _, args := range [][]string{
		{"parked", "resubmit", "--yes", "--reason", "RetryBudgetExhaustd"},
		{"parked", "resubmit", "--yes", "--order", "ORD-404"},
		{"parked", "resubmit", "--yes", "--from", "deadletter"},
		{"parked", "complete", "--yes", "--reason", "HashMismatch", "--older-than", "1h"},
	} {
		code, _, errs := ctlEnv(t, vars, args...)
		if code != exitNotFound || !strings.Contains(errs, "nothing matched") {
			t.Errorf("%v: exit %d (%q), want %d", args, code, errs, exitNotFound)
		}
	}
}

// The lock is checked before each send, not once per receive: a message
// whose lock ends too soon to send and complete it is not sent, and a send
// must end before the lock does, with time left to complete.
func TestResubmitSendsOnlyWithinTheLock(t *testing.T) {
	q, snd := parkingQueueFake(t), &deadlineSender{}
	q.lock = completeMargin + minActTime - time.Second
	vars := withAzureSender(t, q, snd)
	code, out, _ := ctlEnv(t, vars, "parked", "resubmit", "--yes", "--output", "json", "ORD-1")
	if r := decodeResult(t, out); code != exitError || len(snd.deadlines) != 0 || r.Summary.Failed != 1 || !strings.Contains(out, "lock ends in") {
		t.Fatalf("short lock: exit %d, sent %d, %+v\n%s", code, len(snd.deadlines), r.Summary, out)
	}
	if len(q.completed) != 0 || !slices.Contains(q.abandons, 1) {
		t.Errorf("completed %v, abandoned %v: want 1 abandoned untouched", q.completed, q.abandons)
	}

	// A lock shorter than a send's own 30 s deadline: the lock must bind.
	q, snd = parkingQueueFake(t), &deadlineSender{}
	q.lock = 20 * time.Second
	vars = withAzureSender(t, q, snd)
	if code, _, errs := ctlEnv(t, vars, "parked", "resubmit", "--yes", "ORD-1", "ORD-3"); code != exitOK || len(snd.deadlines) != 2 {
		t.Fatalf("exit %d (%s), sent %d", code, errs, len(snd.deadlines))
	}
	latest := time.Now().Add(q.lock - completeMargin) // no lock taken in the run ends later than now+lock
	for i, d := range snd.deadlines {
		if d.After(latest) {
			t.Errorf("send %d may run until %s, past its lock's end less %s (%s)", i, d, completeMargin, latest)
		}
	}
}

// deadlineSender records the deadline of each send.
type deadlineSender struct{ deadlines []time.Time }

func (d *deadlineSender) SendMessage(ctx context.Context, _ *azservicebus.Message, _ *azservicebus.SendMessageOptions) error {
	dl, ok := ctx.Deadline()
	if !ok {
		return fmt.Errorf("a send without a deadline")
	}
	d.deadlines = append(d.deadlines, dl)
	return nil
}

func withAzureSender(t *testing.T, parking *fakeQueue, snd messageSender) map[string]string {
	vars := withAzure(t, parking, newFakeQueue(), nil)
	open := openAzure
	openAzure = func(sb serviceBus, queue string) (queues, error) {
		q, err := open(sb, queue)
		if err == nil {
			q.(*azureQueues).sender = func() (messageSender, error) { return snd, nil }
		}
		return q, err
	}
	return vars
}

// A long walk shows its progress on a terminal: its length is the messages
// passed, not the one settled (the bar is throttled, so a fast run draws
// only its first tick).
func TestProgressCountsTheWalk(t *testing.T) {
	var msgs []*azservicebus.ReceivedMessage
	for i := range 40 {
		msgs = append(msgs, envelopeMessage(t, map[string]any{"reason": "HashMismatch", "orderId": fmt.Sprintf("ORD-%d", i+1), "body": "{}"}))
	}
	vars := withAzure(t, newFakeQueue(msgs...), newFakeQueue(), nil)
	var progress bytes.Buffer
	code, _, errs := session{env: vars, progress: &progress}.ctl(t, "parked", "complete", "--yes", "ORD-40")
	if code != exitOK || !strings.Contains(progress.String(), "/40,") {
		t.Errorf("exit %d (%s); progress %q, want a bar of 40 messages", code, errs, progress.String())
	}
}
