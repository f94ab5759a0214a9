package main

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"
)

// fakePeeker serves its messages in pages, as PeekMessages does, and then
// none.
type fakePeeker struct {
	msgs  []*azservicebus.ReceivedMessage
	calls int
	err   error
}

func (f *fakePeeker) PeekMessages(_ context.Context, max int, _ *azservicebus.PeekMessagesOptions) ([]*azservicebus.ReceivedMessage, error) {
	f.calls++
	if f.err != nil {
		return nil, f.err
	}
	n := min(max, len(f.msgs))
	out := f.msgs[:n]
	f.msgs = f.msgs[n:]
	return out, nil
}

func withAzure(t *testing.T, parking, dl *fakePeeker) map[string]string {
	old := openAzure
	openAzure = func(ns, queue string) (peeker, peeker, func(context.Context), error) {
		if ns != "sb-test.servicebus.windows.net" || queue != "orders-deadletter" {
			t.Errorf("opened %s/%s", ns, queue)
		}
		return parking, dl, func(context.Context) {}, nil
	}
	t.Cleanup(func() { openAzure = old })
	return map[string]string{"SERVICEBUS_FULLY_QUALIFIED_NAMESPACE": "sb-test.servicebus.windows.net"}
}

func TestParkedListAzure(t *testing.T) {
	var parking []*azservicebus.ReceivedMessage
	for i := range 150 { // more than one page
		env, _ := json.Marshal(map[string]any{"reason": "RetryBudgetExhausted", "orderId": "ORD-" + string(rune('A'+i%26)),
			"messageId": "m", "deliveryCount": 9, "description": "create order: 503"})
		parking = append(parking, &azservicebus.ReceivedMessage{MessageID: "p", Body: env})
	}
	enq := time.Date(2026, 12, 1, 7, 0, 0, 0, time.UTC)
	dl := []*azservicebus.ReceivedMessage{{MessageID: "ORD-Z:1", DeliveryCount: 10, Body: []byte(`{"orderId":"ORD-Z"}`),
		DeadLetterReason: to.Ptr("MaxDeliveryCountExceeded"), EnqueuedTime: &enq}}
	p := &fakePeeker{msgs: parking}
	vars := withAzure(t, p, &fakePeeker{msgs: dl})

	code, out, errs := ctlEnv(t, vars, "parked", "list", "--output", "json")
	var got []Parked
	if code != exitOK || json.Unmarshal([]byte(out), &got) != nil {
		t.Fatalf("exit %d: %s\n%s", code, errs, out)
	}
	if len(got) != 151 || p.calls != 3 {
		t.Fatalf("%d messages in %d pages, want 151 (150 parked, 1 dead-lettered) in 3", len(got), p.calls)
	}
	last := got[150]
	if last.Queue != "deadletter" || last.OrderID != "ORD-Z" || last.Reason != "MaxDeliveryCountExceeded" || last.ParkedAt != "2026-12-01T07:00:00Z" {
		t.Errorf("dead letter %+v", last)
	}

	vars = withAzure(t, &fakePeeker{msgs: nil}, &fakePeeker{err: errors.New("401 Unauthorized")})
	if code, _, errs := ctlEnv(t, vars, "parked", "list"); code != exitError || !strings.Contains(errs, "401") {
		t.Errorf("a failed peek: exit %d, stderr %q", code, errs)
	}
}
