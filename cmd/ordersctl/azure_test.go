package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"

	"github.com/ordersink/orders-consumer/orders"
)

// fakeQueue is one Service Bus queue behind the receiver interface: peeks
// page through it without locking; receives lock messages from the head
// (skipping locked ones) until completed (gone) or abandoned (available
// again). Hidden messages are seen by peeks but never delivered, as when
// another receiver holds their lock.
type fakeQueue struct {
	msgs                []*azservicebus.ReceivedMessage
	locked, hidden      map[int64]bool
	completed, abandons []int64
	receives            int
	peekAt              int
	failComplete        bool
	peekErr             error
	// stuckAbandon makes abandons hang until their context ends, as on a
	// connection that stopped answering.
	stuckAbandon bool
	// lock, when set, is how long a receive locks a message: then it is
	// received again once its lock ran out, as from Service Bus.
	lock time.Duration
}

func newFakeQueue(msgs ...*azservicebus.ReceivedMessage) *fakeQueue {
	for i, m := range msgs {
		if m.SequenceNumber == nil {
			m.SequenceNumber = to.Ptr(int64(i + 1))
		}
	}
	return &fakeQueue{msgs: msgs, locked: map[int64]bool{}, hidden: map[int64]bool{}}
}

func (f *fakeQueue) PeekMessages(_ context.Context, max int, _ *azservicebus.PeekMessagesOptions) ([]*azservicebus.ReceivedMessage, error) {
	if f.peekErr != nil {
		return nil, f.peekErr
	}
	start := min(f.peekAt, len(f.msgs))
	out := f.msgs[start:min(start+max, len(f.msgs))]
	f.peekAt = start + len(out)
	if len(out) == 0 {
		f.peekAt = 0 // the next listing opens a receiver of its own
	}
	return out, nil
}

func (f *fakeQueue) ReceiveMessages(ctx context.Context, max int, _ *azservicebus.ReceiveMessagesOptions) ([]*azservicebus.ReceivedMessage, error) {
	f.receives++
	var out []*azservicebus.ReceivedMessage
	for _, m := range f.msgs {
		expired := f.lock > 0 && m.LockedUntil != nil && time.Now().After(*m.LockedUntil)
		if s := seqOf(m); len(out) < max && (!f.locked[s] || expired) && !f.hidden[s] {
			f.locked[s] = true
			m.DeliveryCount++
			if f.lock > 0 {
				m.LockedUntil = to.Ptr(time.Now().Add(f.lock))
			}
			out = append(out, m)
		}
	}
	if len(out) == 0 { // like the SDK: wait for a message until ctx ends
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return out, nil
}

func (f *fakeQueue) CompleteMessage(ctx context.Context, m *azservicebus.ReceivedMessage, _ *azservicebus.CompleteMessageOptions) error {
	if f.failComplete {
		return errors.New("lock lost")
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	f.completed = append(f.completed, seqOf(m))
	f.msgs = slices.DeleteFunc(f.msgs, func(x *azservicebus.ReceivedMessage) bool { return x == m })
	return nil
}

func (f *fakeQueue) AbandonMessage(ctx context.Context, m *azservicebus.ReceivedMessage, _ *azservicebus.AbandonMessageOptions) error {
	if f.stuckAbandon {
		<-ctx.Done()
		return ctx.Err()
	}
	f.abandons = append(f.abandons, seqOf(m))
	delete(f.locked, seqOf(m))
	return nil
}

type fakeSender struct {
	sent []*azservicebus.Message
	fail error
	// afterSend runs once a message is sent: an operator's Ctrl-C, say.
	afterSend func()
}

func (f *fakeSender) SendMessage(ctx context.Context, m *azservicebus.Message, _ *azservicebus.SendMessageOptions) error {
	if f.fail != nil {
		return f.fail
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	f.sent = append(f.sent, m)
	if f.afterSend != nil {
		f.afterSend()
	}
	return nil
}

const testNamespace = "sb-test.servicebus.windows.net"

// withAzure puts the fakes behind --namespace for one test, with an empty
// parked-deadletter queue.
func withAzure(t *testing.T, parking, dl *fakeQueue, snd *fakeSender) map[string]string {
	return withAzureQueues(t, parking, dl, newFakeQueue(), snd)
}

// withAzureQueues puts the fakes of the three queues behind --namespace.
func withAzureQueues(t *testing.T, parking, dl, parkedDL *fakeQueue, snd *fakeSender) map[string]string {
	old := openAzure
	openAzure = func(sb serviceBus, queue string) (queues, error) {
		if sb.namespace != testNamespace || sb.connectionString != "" || queue != "orders-deadletter" {
			t.Errorf("opened %+v/%s", sb, queue)
		}
		parking.peekAt, dl.peekAt, parkedDL.peekAt = 0, 0, 0 // each command peeks with receivers of its own
		return &azureQueues{namespace: sb.namespace, parkingName: queue, parking: parking, deadLetters: dl, parkedDeadLetters: parkedDL,
			sender: func() (messageSender, error) { return snd, nil }, close: func(context.Context) {}}, nil
	}
	t.Cleanup(func() { openAzure = old })
	return map[string]string{"SERVICEBUS_FULLY_QUALIFIED_NAMESPACE": testNamespace}
}

func envelopeMessage(t *testing.T, env map[string]any) *azservicebus.ReceivedMessage {
	b, err := json.Marshal(env)
	if err != nil {
		t.Fatal(err)
	}
	return &azservicebus.ReceivedMessage{MessageID: "parking-" + env["orderId"].(string), Body: b}
}

// parkingQueueFake holds, by sequence number: 1 ORD-1 RetryBudgetExhausted,
// 2 ORD-2 HashMismatch, 3 ORD-3 RetryBudgetExhausted (a status change, body
// in base64), 4 ORD-4 RetryBudgetExhausted truncated.
func parkingQueueFake(t *testing.T) *fakeQueue {
	return newFakeQueue(
		envelopeMessage(t, map[string]any{"reason": "RetryBudgetExhausted", "orderId": "ORD-1", "messageId": "ORD-1", "body": `{"orderId":"ORD-1"}`}),
		envelopeMessage(t, map[string]any{"reason": "HashMismatch", "orderId": "ORD-2", "messageId": "m2", "body": `{"orderId":"ORD-2"}`}),
		envelopeMessage(t, map[string]any{"reason": "RetryBudgetExhausted", "orderId": "ORD-3", "subject": "OrderStatusChanged",
			"body": "eyJvcmRlcklkIjoiT1JELTMifQ==", "bodyEncoding": "base64"}),
		envelopeMessage(t, map[string]any{"reason": "RetryBudgetExhausted", "orderId": "ORD-4", "body": `{"orderId":`, "truncated": true}),
	)
}

func TestParkedListAzure(t *testing.T) {
	var parking []*azservicebus.ReceivedMessage
	for i := range 150 { // more than one page
		env, _ := json.Marshal(map[string]any{"reason": "RetryBudgetExhausted", "orderId": "ORD-" + string(rune('A'+i%26)),
			"messageId": "m", "deliveryCount": 9, "description": "create order: 503"})
		parking = append(parking, &azservicebus.ReceivedMessage{MessageID: "p", Body: env})
	}
	enq := time.Date(2026, 12, 1, 7, 0, 0, 0, time.UTC)
	dl := newFakeQueue(&azservicebus.ReceivedMessage{MessageID: "ORD-Z:1", DeliveryCount: 10, Body: []byte(`{"orderId":"ORD-Z"}`),
		DeadLetterReason: to.Ptr("MaxDeliveryCountExceeded"), EnqueuedTime: &enq, SequenceNumber: to.Ptr(int64(77))})
	vars := withAzure(t, newFakeQueue(parking...), dl, nil)

	code, out, errs := ctlEnv(t, vars, "parked", "list", "--output", "json")
	var got []Parked
	if code != exitOK || json.Unmarshal([]byte(out), &got) != nil {
		t.Fatalf("exit %d: %s\n%s", code, errs, out)
	}
	if len(got) != 151 || got[149].SequenceNumber != 150 {
		t.Fatalf("%d messages, want 151 (150 parked, 1 dead-lettered)", len(got))
	}
	last := got[150]
	if last.Queue != deadLetterQueue || last.SequenceNumber != 77 || last.OrderID != "ORD-Z" || last.Reason != "MaxDeliveryCountExceeded" || last.ParkedAt != "2026-12-01T07:00:00Z" {
		t.Errorf("dead letter %+v", last)
	}

	failing := newFakeQueue()
	failing.peekErr = errors.New("401 Unauthorized")
	vars = withAzure(t, newFakeQueue(), failing, nil)
	if code, _, errs := ctlEnv(t, vars, "parked", "list"); code != exitError || !strings.Contains(errs, "401") {
		t.Errorf("a failed peek: exit %d, stderr %q", code, errs)
	}
}

func TestAzureResubmitSendsThenCompletesOnlyTheChosen(t *testing.T) {
	q, snd := parkingQueueFake(t), &fakeSender{}
	vars := withAzure(t, q, newFakeQueue(), snd)
	code, out, errs := ctlEnv(t, vars, "parked", "resubmit", "--yes", "--output", "json")
	r := decodeResult(t, out)
	// Exit 1: the truncated one is skipped and stays parked.
	if code != exitError || r.Summary.Done != 2 || r.Summary.Skipped != 1 || !strings.Contains(errs, "stay in the queue") {
		t.Fatalf("exit %d, %+v, %s", code, r, errs)
	}
	// 2 (another reason) was passed on the way to 3 and abandoned; 4
	// (truncated, skipped) lies beyond the last chosen and was not received.
	if !slices.Equal(q.completed, []int64{1, 3}) || !slices.Equal(q.abandons, []int64{2}) || len(q.msgs) != 2 {
		t.Errorf("completed %v, abandoned %v, left %d", q.completed, q.abandons, len(q.msgs))
	}
	body3 := []byte(`{"orderId":"ORD-3"}`)
	if len(snd.sent) != 2 || string(snd.sent[1].Body) != string(body3) || !strings.HasPrefix(*snd.sent[1].MessageID, orders.MessageID("ORD-3", body3)+":r") ||
		*snd.sent[1].Subject != "OrderStatusChanged" || snd.sent[0].Subject != nil || *snd.sent[0].ContentType != "application/json" {
		t.Errorf("sent %+v", snd.sent)
	}
}

func TestAzureResubmitDryRunAndFailures(t *testing.T) {
	t.Run("a dry run only peeks", func(t *testing.T) {
		q, snd := parkingQueueFake(t), &fakeSender{}
		vars := withAzure(t, q, newFakeQueue(), snd)
		code, out, _ := ctlEnv(t, vars, "parked", "resubmit", "--yes", "--dry-run", "--reason", "RetryBudgetExhausted", "--reason", "HashMismatch")
		if code != exitError || q.receives != 0 || len(snd.sent) != 0 || !strings.Contains(out, "3 would be done (dry run), 1 skipped") {
			t.Errorf("exit %d, %d receives, %d sent\n%s", code, q.receives, len(snd.sent), out)
		}
	})
	t.Run("a failed send leaves the message parked", func(t *testing.T) {
		q, snd := parkingQueueFake(t), &fakeSender{fail: errors.New("401")}
		vars := withAzure(t, q, newFakeQueue(), snd)
		code, out, _ := ctlEnv(t, vars, "parked", "resubmit", "--yes", "--output", "json")
		if r := decodeResult(t, out); code != exitError || len(q.completed) != 0 || r.Summary.Failed != 2 || len(q.msgs) != 4 {
			t.Errorf("exit %d, completed %v, %+v", code, q.completed, r.Summary)
		}
	})
	t.Run("a failed complete is reported", func(t *testing.T) {
		q, snd := parkingQueueFake(t), &fakeSender{}
		q.failComplete = true
		vars := withAzure(t, q, newFakeQueue(), snd)
		code, out, _ := ctlEnv(t, vars, "parked", "resubmit", "--yes", "--output", "json")
		if r := decodeResult(t, out); code != exitError || len(snd.sent) != 2 || r.Summary.Failed != 2 || len(r.Results) == 0 || !strings.Contains(r.Results[0].Detail, "still in the queue") {
			t.Errorf("exit %d, sent %d, %+v", code, len(snd.sent), r)
		}
	})
	t.Run("a message locked elsewhere is gone, not lost", func(t *testing.T) {
		q, snd := parkingQueueFake(t), &fakeSender{}
		q.hidden[3] = true
		vars := withAzure(t, q, newFakeQueue(), snd)
		code, out, _ := ctlEnv(t, vars, "parked", "resubmit", "--yes", "--output", "json")
		if r := decodeResult(t, out); code != exitError || r.Summary.Done != 1 || r.Summary.Gone != 1 || len(snd.sent) != 1 {
			t.Errorf("exit %d, %+v", code, r.Summary)
		}
	})
	t.Run("max bounds the work", func(t *testing.T) {
		q, snd := parkingQueueFake(t), &fakeSender{}
		vars := withAzure(t, q, newFakeQueue(), snd)
		if code, _, _ := ctlEnv(t, vars, "parked", "resubmit", "--yes", "--max", "1"); code != exitOK || len(snd.sent) != 1 || len(q.msgs) != 3 {
			t.Errorf("exit %d, sent %d, %d left", code, len(snd.sent), len(q.msgs))
		}
	})
}

// A message named is resubmitted whatever its reason, with a warning.
func TestAzureResubmitNamed(t *testing.T) {
	q, snd := parkingQueueFake(t), &fakeSender{}
	vars := withAzure(t, q, newFakeQueue(), snd)
	code, _, errs := ctlEnv(t, vars, "parked", "resubmit", "--yes", "ORD-2")
	if code != exitOK || !strings.Contains(errs, "warning: HashMismatch") || len(snd.sent) != 1 || !slices.Equal(q.completed, []int64{2}) {
		t.Errorf("exit %d, %q, sent %d, completed %v", code, errs, len(snd.sent), q.completed)
	}
	if code, _, _ := ctlEnv(t, vars, "parked", "resubmit", "--yes", "ORD-2"); code != exitNotFound {
		t.Errorf("again: exit %d, want %d", code, exitNotFound)
	}
}

func TestAzureComplete(t *testing.T) {
	q := parkingQueueFake(t)
	vars := withAzure(t, q, newFakeQueue(), nil)
	if code, _, _ := ctlEnv(t, vars, "parked", "complete", "3"); code != exitUsage || q.receives != 0 {
		t.Fatalf("without --yes off a terminal: exit %d, %d receives", code, q.receives)
	}
	code, out, errs := ctlEnv(t, vars, "parked", "complete", "--yes", "3")
	if code != exitOK || !slices.Equal(q.completed, []int64{3}) || !slices.Equal(q.abandons, []int64{1, 2}) || !strings.Contains(out, "1 done") {
		t.Errorf("exit %d (%s), completed %v, abandoned %v\n%s", code, errs, q.completed, q.abandons, out)
	}
}

func TestAzureRedriveBrokerDeadLetters(t *testing.T) {
	body := []byte(`{"orderId":"ORD-8"}`)
	dl := newFakeQueue(
		&azservicebus.ReceivedMessage{MessageID: "ORD-8", Body: body, Subject: to.Ptr("OrderPlaced"), DeadLetterReason: to.Ptr("MaxDeliveryCountExceeded")},
		&azservicebus.ReceivedMessage{MessageID: "x", Body: []byte{0xff}, DeadLetterReason: to.Ptr("TTLExpiredException")},
	)
	snd := &fakeSender{}
	vars := withAzure(t, parkingQueueFake(t), dl, snd)
	if code, _, errs := ctlEnv(t, vars, "parked", "resubmit", "--yes", "--from", "deadletter"); code != exitOK || len(snd.sent) != 2 || len(dl.msgs) != 0 {
		t.Fatalf("exit %d (%s), sent %d", code, errs, len(snd.sent))
	}
	if m := snd.sent[0]; !strings.HasPrefix(*m.MessageID, orders.MessageID("ORD-8", body)+":r") || *m.Subject != "OrderPlaced" || string(m.Body) != string(body) {
		t.Errorf("sent %+v", m)
	}
	if m := snd.sent[1]; len(m.Body) != 1 || m.Body[0] != 0xff {
		t.Errorf("a body that is not UTF-8 was not sent byte for byte: %v", m.Body)
	}
}

// fakePartition serves the documents of one partition.
type fakePartition map[string][]json.RawMessage

func (f fakePartition) PartitionDocuments(_ context.Context, pk string) ([]json.RawMessage, error) {
	return f[pk], nil
}

// ParkedBodyVersions lists the documents of pk whose bodySha256 is digest
// (the fake has no _etag: every version is "1").
func (f fakePartition) ParkedBodyVersions(_ context.Context, pk, digest string) (map[string]string, error) {
	v := map[string]string{}
	for _, raw := range f[pk] {
		var d struct{ ID, BodySha256 string }
		if err := json.Unmarshal(raw, &d); err != nil {
			return nil, err
		}
		if d.BodySha256 == digest {
			v[d.ID] = "1"
		}
	}
	return v, nil
}

// DeleteParkedBody deletes the documents of pk named in versions.
func (f fakePartition) DeleteParkedBody(_ context.Context, pk string, versions map[string]string) (int, int, error) {
	left := f[pk][:0:0]
	for _, raw := range f[pk] {
		var d struct{ ID string }
		if err := json.Unmarshal(raw, &d); err != nil {
			return 0, 0, err
		}
		if _, ok := versions[d.ID]; !ok {
			left = append(left, raw)
		}
	}
	n := len(f[pk]) - len(left)
	f[pk] = left
	return n, 0, nil
}

// An envelope too large for its body points to it in Cosmos DB; the
// resubmission carries the body read back, checked against its digest.
func TestResubmissionReadsABodyKeptInCosmos(t *testing.T) {
	body := []byte(`{"orderId":"ORD-9","pad":"` + strings.Repeat("x", 300_000) + `"}`)
	pb := orders.NewParkedBody(body, "ORD-9", "m9", orders.RetryBudgetExhausted, time.Now())
	raw, err := pb.Documents()
	if err != nil || len(raw) == 0 {
		t.Fatalf("parked body documents: %d, %v", len(raw), err)
	}
	p := Parked{OrderID: "ORD-9", Reason: "RetryBudgetExhausted", BodyRef: &bodyRef{ID: pb.ID(), PartitionKey: "ORD-9"}, BodySHA256: pb.SHA256}
	msg, err := resubmission(context.Background(), p, &parkedBodies{store: fakePartition{"ORD-9": {raw[0]}}}, time.Now())
	if err != nil || string(msg.Body) != string(body) || !strings.HasPrefix(*msg.MessageID, orders.MessageID("ORD-9", body)) {
		t.Fatalf("err %v, %d bytes", err, len(msg.Body))
	}
	unpublishable := Parked{Reason: "Unpublishable", Body: `{"type":"outboxEvent"}`}
	if _, err := resubmission(context.Background(), unpublishable, nil, time.Now()); err == nil || !strings.Contains(err.Error(), "outbox event") {
		t.Errorf("an Unpublishable envelope would be sent to orders: %v", err)
	}
	_, err = resubmission(context.Background(), p, &parkedBodies{store: fakePartition{}}, time.Now())
	if err == nil || !strings.Contains(err.Error(), "no document") {
		t.Errorf("body expired: %v", err)
	}
	_, err = resubmission(context.Background(), p, &parkedBodies{getenv: func(string) string { return "" }}, time.Now())
	if err == nil || !strings.Contains(err.Error(), "COSMOS_ENDPOINT") {
		t.Errorf("no Cosmos configured: %v", err)
	}
}

// The body an envelope carries is checked against its bodySha256 too (base64
// or text): a resubmission sends the bytes the producer sent or nothing.
func TestResubmissionChecksAnInlineBody(t *testing.T) {
	body := []byte("{\"orderId\":\"ORD-7\",\"note\":\"caf\xe9\"}") // not UTF-8
	for _, tc := range []struct {
		name   string
		p      Parked
		wantOK bool
	}{
		{"base64, digest matches", Parked{Body: base64.StdEncoding.EncodeToString(body), BodyEncoding: "base64", BodySHA256: orders.BodySHA256(body)}, true},
		{"text, digest matches", Parked{Body: `{"orderId":"ORD-7"}`, BodySHA256: orders.BodySHA256([]byte(`{"orderId":"ORD-7"}`))}, true},
		{"no digest (an older envelope)", Parked{Body: `{"orderId":"ORD-7"}`}, true},
		{"text, digest of other bytes", Parked{Body: `{"orderId":"ORD-7"}`, BodySHA256: orders.BodySHA256(body)}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.p.OrderID, tc.p.Reason = "ORD-7", "RetryBudgetExhausted"
			_, err := resubmission(context.Background(), tc.p, nil, time.Now())
			if (err == nil) != tc.wantOK || err != nil && !strings.Contains(err.Error(), "bodySha256") {
				t.Errorf("err %v, want ok %v", err, tc.wantOK)
			}
		})
	}
}

// A resubmission never carries the MessageId of the original send, which
// the broker's duplicate detection would drop inside its window.
func TestResubmitMessageIDDiffersFromTheOriginalAndFits(t *testing.T) {
	body := []byte(`{}`)
	long := strings.Repeat("é", 255)
	id := resubmitMessageID(long, body, time.Date(2286, 11, 20, 17, 46, 39, 0, time.UTC)) // 10-digit Unix time
	if id == orders.MessageID(long, body) || len([]rune(id)) > orders.MaxMessageIDLength {
		t.Errorf("resubmission MessageId %q (%d characters)", id, len([]rune(id)))
	}
}

// Ctrl-C, or a namespace that stopped answering, must end the command within
// one Service Bus deadline, not one per message it holds: the locks it gives
// up expire by themselves. On virtual time: the nine stuck abandons share
// one deadline exactly.
func TestAzureGivingBackIsBoundedByOneDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		old := opTimeout
		opTimeout = 100 * time.Millisecond
		t.Cleanup(func() { opTimeout = old })
		var msgs []*azservicebus.ReceivedMessage
		for i := range 10 {
			msgs = append(msgs, envelopeMessage(t, map[string]any{"reason": "HashMismatch", "orderId": fmt.Sprintf("ORD-%d", i+1), "body": "{}"}))
		}
		q := newFakeQueue(msgs...)
		q.stuckAbandon = true
		vars := withAzure(t, q, newFakeQueue(), nil)
		start := time.Now()
		code, _, errs := ctlEnv(t, vars, "parked", "complete", "--yes", "10") // walks past nine
		if took := time.Since(start); code != exitOK || took != opTimeout {
			t.Errorf("exit %d (%s) after %v; want 0 after one deadline of %v (nine stuck abandons)", code, errs, took, opTimeout)
		}
		var deadline bool
		a := &azureQueues{close: func(ctx context.Context) { _, deadline = ctx.Deadline() }}
		a.Close(context.Background())
		if !deadline {
			t.Error("Close without a deadline: a hung connection holds the operator's shell")
		}
	})
}

// A resubmission that was sent is completed even when the operator presses
// Ctrl-C just after: otherwise it stays parked and is sent twice.
func TestAzureInterruptAfterSendStillCompletes(t *testing.T) {
	q := parkingQueueFake(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	snd := &fakeSender{afterSend: cancel}
	vars := withAzure(t, q, newFakeQueue(), snd)
	var out, errb strings.Builder
	c := &cli{getenv: func(k string) string { return vars[k] }, stdout: &out, stderr: &errb}
	code := run(ctx, []string{"parked", "resubmit", "--yes", "--output", "json"}, c)
	// 1 was sent, then Ctrl-C: 1 must be completed, 3 neither sent nor
	// completed, and the run must say it did not finish.
	if code != exitError || len(snd.sent) != 1 || !slices.Equal(q.completed, []int64{1}) {
		t.Fatalf("exit %d, sent %d, completed %v\n%s%s", code, len(snd.sent), q.completed, out.String(), errb.String())
	}
	if r := decodeResult(t, out.String()); r.Summary.Done != 1 || r.Summary.Gone != 0 || r.Summary.Failed != 1 {
		t.Errorf("%+v: want 1 done and 3 failed (interrupted), none gone", r.Summary)
	}
}

// A listing stops at maxPeek messages a queue; it must say so, or an
// operator takes the first thousand for all there is.
func TestAzureListSaysWhenItStopsAtTheLimit(t *testing.T) {
	var msgs []*azservicebus.ReceivedMessage
	for i := range maxPeek + 1 {
		msgs = append(msgs, envelopeMessage(t, map[string]any{"reason": "RetryBudgetExhausted", "orderId": fmt.Sprintf("ORD-%d", i+1), "body": "{}"}))
	}
	vars := withAzure(t, newFakeQueue(msgs...), newFakeQueue(), &fakeSender{})
	code, out, errs := ctlEnv(t, vars, "parked", "list", "--output", "json")
	var got []Parked
	if code != exitOK || json.Unmarshal([]byte(out), &got) != nil || len(got) != maxPeek {
		t.Fatalf("exit %d, %d listed (%s)", code, len(got), errs)
	}
	if !strings.Contains(errs, "warning: the parking queue holds more than 1000 messages") {
		t.Errorf("stderr %q: want a warning that the listing is cut", errs)
	}
	if _, _, errs := ctlEnv(t, vars, "parked", "resubmit", "--yes", "--dry-run"); !strings.Contains(errs, "warning: the parking queue holds more than 1000") {
		t.Errorf("resubmit: stderr %q: want the same warning", errs)
	}
	vars = withAzure(t, newFakeQueue(msgs[:maxPeek]...), newFakeQueue(), &fakeSender{})
	if _, _, errs := ctlEnv(t, vars, "parked", "list"); strings.Contains(errs, "warning") {
		t.Errorf("exactly %d: stderr %q, want no warning", maxPeek, errs)
	}
}

// One message in the parking queue that is not an envelope (sent by hand, a
// future envelope's shape) must not stop the operator from listing,
// resubmitting or completing all the others, nor from removing it.
func TestAzureAMessageThatIsNotAnEnvelope(t *testing.T) {
	queue := func() *fakeQueue {
		return newFakeQueue(&azservicebus.ReceivedMessage{MessageID: "by-hand", Body: []byte("hello")},
			envelopeMessage(t, map[string]any{"reason": "RetryBudgetExhausted", "orderId": "ORD-1", "body": `{"orderId":"ORD-1"}`}))
	}
	q, snd := queue(), &fakeSender{}
	vars := withAzure(t, q, newFakeQueue(), snd)
	code, out, errs := ctlEnv(t, vars, "parked", "list", "--output", "json")
	var got []Parked
	if code != exitOK || json.Unmarshal([]byte(out), &got) != nil || len(got) != 2 {
		t.Fatalf("list: exit %d (%s)\n%s", code, errs, out)
	}
	if got[0].Reason != notAnEnvelope || got[0].MessageID != "by-hand" || got[0].Body != "hello" || !strings.Contains(got[0].Description, "not a parking envelope") {
		t.Errorf("listed as %+v", got[0])
	}
	if code, _, errs := ctlEnv(t, vars, "parked", "resubmit", "--yes"); code != exitOK || len(snd.sent) != 1 || !slices.Equal(q.completed, []int64{2}) {
		t.Errorf("resubmit: exit %d (%s), sent %d, completed %v", code, errs, len(snd.sent), q.completed)
	}
	q, snd = queue(), &fakeSender{}
	vars = withAzure(t, q, newFakeQueue(), snd)
	if code, out, _ := ctlEnv(t, vars, "parked", "resubmit", "--yes", "1"); code != exitError || len(snd.sent) != 0 || !strings.Contains(out, "skipped") {
		t.Errorf("resubmit named: exit %d, sent %d; want it skipped\n%s", code, len(snd.sent), out)
	}
	if code, _, errs := ctlEnv(t, vars, "parked", "complete", "--yes", "1"); code != exitOK || !slices.Equal(q.completed, []int64{1}) {
		t.Errorf("complete: exit %d (%s), completed %v", code, errs, q.completed)
	}
}

// At 3 am an error must say what to do: sign in, get a role, fix a name.
func TestAzureErrorsSayWhatToDo(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"no credential", fmt.Errorf("peek: %w", azidentity.NewCredentialUnavailableError("DefaultAzureCredential: failed to acquire a token")), "az login"},
		{"401/403 from Entra ID", &azservicebus.Error{Code: azservicebus.CodeUnauthorizedAccess}, "Azure Service Bus Data Receiver"},
		{"no such queue", &azservicebus.Error{Code: azservicebus.CodeNotFound}, "--parking-queue"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			failing := newFakeQueue()
			failing.peekErr = tc.err
			vars := withAzure(t, failing, newFakeQueue(), nil)
			if code, _, errs := ctlEnv(t, vars, "parked", "list"); code != exitError || !strings.Contains(errs, tc.want) || !strings.Contains(errs, testNamespace) {
				t.Errorf("exit %d, stderr %q; want %q and the namespace", code, errs, tc.want)
			}
		})
	}
	t.Run("a namespace that is not a host name", func(t *testing.T) {
		code, _, errs := ctl(t, "parked", "list", "--namespace", "sb-orders-prod")
		if code != exitUsage || !strings.Contains(errs, "servicebus.windows.net") {
			t.Errorf("exit %d, stderr %q", code, errs)
		}
	})
}

// Reaching a message receives every one before it, and each receive counts
// a delivery: a message the walk passes on its last delivery would be moved
// by the broker to orders-deadletter/$deadletterqueue, out of the parked
// list and the alert. Settling refuses that walk before receiving anything.
func TestAzureSettleNeverWalksPastALastDelivery(t *testing.T) {
	q := parkingQueueFake(t)
	q.msgs[0].DeliveryCount = parkingMaxDeliveries - 1 // passed over by nine runs
	vars := withAzure(t, q, newFakeQueue(), &fakeSender{})
	code, out, errs := ctlEnv(t, vars, "parked", "complete", "--yes", "--output", "json", "3")
	if r := decodeResult(t, out); code != exitError || q.receives != 0 || r.Summary.Failed != 1 || !strings.Contains(errs, "$deadletterqueue") || !strings.Contains(errs, "1") {
		t.Fatalf("exit %d, %d receives, %+v, stderr %q", code, q.receives, r.Summary, errs)
	}
	// Dealing with the oldest first works, and then the rest can follow.
	if code, _, errs := ctlEnv(t, vars, "parked", "complete", "--yes", "1"); code != exitOK {
		t.Fatalf("complete 1: exit %d, %s", code, errs)
	}
	if code, _, errs := ctlEnv(t, vars, "parked", "complete", "--yes", "3"); code != exitOK || !slices.Equal(q.completed, []int64{1, 3}) {
		t.Fatalf("complete 3: exit %d, %s, completed %v", code, errs, q.completed)
	}
	// Receives stop at the last chosen message: 2 was passed once (on the
	// way to 3), 4 after it never received.
	if len(q.msgs) != 2 {
		t.Fatalf("%d messages left in the queue, want 2 and 4", len(q.msgs))
	}
	if two, four := q.msgs[0], q.msgs[1]; seqOf(two) != 2 || two.DeliveryCount != 1 || seqOf(four) != 4 || four.DeliveryCount != 0 {
		t.Errorf("deliveries counted: %d has %d (want 2 with 1), %d has %d (want 4 with 0)", seqOf(two), two.DeliveryCount, seqOf(four), four.DeliveryCount)
	}
}

// A long run must not receive a message twice: a passed message whose lock
// ran out comes back, and each receive counts one of its deliveries. The
// walk stops before the first lock it holds runs out; what it did not reach
// is reported, not settled.
func TestAzureWalkStopsBeforeItsLocksRunOut(t *testing.T) {
	var msgs []*azservicebus.ReceivedMessage
	for i := range 25 {
		msgs = append(msgs, envelopeMessage(t, map[string]any{"reason": "HashMismatch", "orderId": fmt.Sprintf("ORD-%d", i+1), "body": "{}"}))
	}
	q := newFakeQueue(msgs...)
	q.lock = time.Nanosecond // every lock has run out by the next receive
	vars := withAzure(t, q, newFakeQueue(), nil)
	code, out, _ := ctlEnv(t, vars, "parked", "complete", "--yes", "--output", "json", "25")
	if r := decodeResult(t, out); code != exitError || r.Summary.Gone != 1 || len(q.completed) != 0 {
		t.Errorf("exit %d, %+v, completed %v", code, r.Summary, q.completed)
	}
	for _, m := range q.msgs {
		if m.DeliveryCount > 1 {
			t.Errorf("message %d received %d times in one run", seqOf(m), m.DeliveryCount)
		}
	}
}
