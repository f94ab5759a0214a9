package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"

	"github.com/ordersink/orders-consumer/orders"
)

// fakeParking is a parking queue in peek-lock mode: received messages are
// locked until completed or abandoned.
type fakeParking struct {
	ready               []*azservicebus.ReceivedMessage
	completed, abandons []string
	failComplete        bool
	peeked              int
}

func (f *fakeParking) ReceiveMessages(ctx context.Context, max int, _ *azservicebus.ReceiveMessagesOptions) ([]*azservicebus.ReceivedMessage, error) {
	if len(f.ready) == 0 { // like the SDK: wait for a message until ctx ends
		<-ctx.Done()
		return nil, ctx.Err()
	}
	n := min(max, len(f.ready))
	out := f.ready[:n]
	f.ready = f.ready[n:]
	return out, nil
}

func (f *fakeParking) PeekMessages(_ context.Context, max int, _ *azservicebus.PeekMessagesOptions) ([]*azservicebus.ReceivedMessage, error) {
	n := min(max, len(f.ready)-f.peeked)
	out := f.ready[f.peeked : f.peeked+n]
	f.peeked += n
	return out, nil
}

func (f *fakeParking) CompleteMessage(_ context.Context, m *azservicebus.ReceivedMessage, _ *azservicebus.CompleteMessageOptions) error {
	if f.failComplete {
		return errors.New("lock lost")
	}
	f.completed = append(f.completed, m.MessageID)
	return nil
}

func (f *fakeParking) AbandonMessage(_ context.Context, m *azservicebus.ReceivedMessage, _ *azservicebus.AbandonMessageOptions) error {
	f.abandons = append(f.abandons, m.MessageID)
	return nil
}

type fakeSender struct {
	sent []*azservicebus.Message
	fail error
}

func (f *fakeSender) SendMessage(_ context.Context, m *azservicebus.Message, _ *azservicebus.SendMessageOptions) error {
	if f.fail != nil {
		return f.fail
	}
	f.sent = append(f.sent, m)
	return nil
}

func parkedMessage(t *testing.T, id string, env map[string]any) *azservicebus.ReceivedMessage {
	b, err := json.Marshal(env)
	if err != nil {
		t.Fatal(err)
	}
	return &azservicebus.ReceivedMessage{MessageID: id, Body: b}
}

func parkingQueue(t *testing.T) *fakeParking {
	return &fakeParking{ready: []*azservicebus.ReceivedMessage{
		parkedMessage(t, "p1", map[string]any{"reason": "RetryBudgetExhausted", "orderId": "ORD-1", "messageId": "ORD-1", "body": `{"orderId":"ORD-1"}`}),
		parkedMessage(t, "p2", map[string]any{"reason": "HashMismatch", "orderId": "ORD-2", "body": `{"orderId":"ORD-2"}`}),
		parkedMessage(t, "p3", map[string]any{"reason": "RetryBudgetExhausted", "orderId": "ORD-3", "subject": "OrderStatusChanged",
			"body": "eyJvcmRlcklkIjoiT1JELTMifQ==", "bodyEncoding": "base64"}),
		parkedMessage(t, "p4", map[string]any{"reason": "RetryBudgetExhausted", "orderId": "ORD-4", "body": `{"orderId":`, "truncated": true}),
	}}
}

func TestResubmitSendsThenCompletesOnlyTheChosenReason(t *testing.T) {
	q, snd := parkingQueue(t), &fakeSender{}
	var out bytes.Buffer
	sum, err := resubmit(context.Background(), q, snd, fromParking, map[string]bool{"RetryBudgetExhausted": true}, 100, false, &out)
	if err != nil || sum != (resubmitSummary{Resubmitted: 2, Skipped: 2}) {
		t.Fatalf("summary %+v, err %v\n%s", sum, err, out.String())
	}
	if strings.Join(q.completed, ",") != "p1,p3" || strings.Join(q.abandons, ",") != "p2,p4" {
		t.Errorf("completed %v, abandoned %v; want p1,p3 and p2,p4 (another reason; a truncated body)", q.completed, q.abandons)
	}
	body3 := []byte(`{"orderId":"ORD-3"}`)
	if len(snd.sent) != 2 || string(snd.sent[1].Body) != string(body3) || !strings.HasPrefix(*snd.sent[1].MessageID, orders.MessageID("ORD-3", body3)+":r") ||
		*snd.sent[1].Subject != "OrderStatusChanged" || snd.sent[0].Subject != nil || *snd.sent[0].ContentType != "application/json" {
		t.Errorf("sent %+v", snd.sent)
	}
}

func TestResubmitDryRunAndFailures(t *testing.T) {
	all := map[string]bool{"RetryBudgetExhausted": true, "HashMismatch": true}
	t.Run("dry run sends and completes nothing", func(t *testing.T) {
		q, snd := parkingQueue(t), &fakeSender{}
		sum, err := resubmit(context.Background(), q, snd, fromParking, all, 100, true, &bytes.Buffer{})
		if err != nil || len(snd.sent) != 0 || len(q.completed) != 0 || len(q.abandons) != 0 || len(q.ready) != 4 || sum.Skipped != 4 {
			t.Errorf("sent %d, completed %v, abandoned %v, %+v, %v", len(snd.sent), q.completed, q.abandons, sum, err)
		}
	})
	t.Run("a failed send leaves the message parked", func(t *testing.T) {
		q, snd := parkingQueue(t), &fakeSender{fail: errors.New("401")}
		sum, _ := resubmit(context.Background(), q, snd, fromParking, all, 100, false, &bytes.Buffer{})
		if len(q.completed) != 0 || sum.Failed != 3 || sum.Resubmitted != 0 {
			t.Errorf("completed %v, %+v", q.completed, sum)
		}
	})
	t.Run("a failed complete is reported", func(t *testing.T) {
		q, snd := parkingQueue(t), &fakeSender{}
		q.failComplete = true
		sum, _ := resubmit(context.Background(), q, snd, fromParking, all, 100, false, &bytes.Buffer{})
		if len(snd.sent) != 3 || sum.Failed != 3 {
			t.Errorf("sent %d, %+v", len(snd.sent), sum)
		}
	})
	t.Run("max bounds the work", func(t *testing.T) {
		q, snd := parkingQueue(t), &fakeSender{}
		if sum, _ := resubmit(context.Background(), q, snd, fromParking, all, 2, false, &bytes.Buffer{}); sum.Resubmitted+sum.Skipped+sum.Failed != 2 || len(q.ready) != 2 {
			t.Errorf("%+v, %d left", sum, len(q.ready))
		}
	})
}

func TestResubmitUsage(t *testing.T) {
	if code, _, _ := ctl(t, "parked", "resubmit"); code != exitUsage {
		t.Errorf("without a namespace: exit %d, want %d", code, exitUsage)
	}
}

func TestResubmitBrokerDeadLetters(t *testing.T) {
	body := []byte(`{"orderId":"ORD-8"}`)
	q := &fakeParking{ready: []*azservicebus.ReceivedMessage{
		{MessageID: "ORD-8", Body: body, Subject: to.Ptr("OrderPlaced"), DeadLetterReason: to.Ptr("MaxDeliveryCountExceeded")},
		{MessageID: "x", Body: []byte{0xff}, DeadLetterReason: to.Ptr("TTLExpiredException")},
	}}
	snd := &fakeSender{}
	sum, err := resubmit(context.Background(), q, snd, fromBrokerDeadLetter, nil, 100, false, &bytes.Buffer{})
	if err != nil || sum.Resubmitted != 2 || len(snd.sent) != 2 {
		t.Fatalf("%+v, %v", sum, err)
	}
	if m := snd.sent[0]; !strings.HasPrefix(*m.MessageID, orders.MessageID("ORD-8", body)+":r") || *m.MessageID == "ORD-8" || *m.Subject != "OrderPlaced" || string(m.Body) != string(body) {
		t.Errorf("sent %+v", m)
	}
	if m := snd.sent[1]; len(m.Body) != 1 || m.Body[0] != 0xff {
		t.Errorf("a body that is not UTF-8 was not sent byte for byte: %v", m.Body)
	}
}

// A resubmission never carries the MessageId of the original send, which
// the broker's duplicate detection would drop inside its window.
func TestResubmitMessageIDDiffersFromTheOriginalAndFits(t *testing.T) {
	body := []byte(`{}`)
	long := strings.Repeat("é", 255)
	id := resubmitMessageID(long, body, time.Date(2286, 11, 20, 17, 46, 39, 0, time.UTC)) // 10-digit Unix time
	if id == orders.MessageID(long, body) || utf8.RuneCountInString(id) > orders.MaxMessageIDLength {
		t.Errorf("resubmission MessageId %q (%d characters)", id, utf8.RuneCountInString(id))
	}
}
