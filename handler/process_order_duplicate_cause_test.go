package handler

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/ordersink/orders-consumer/handler/handlertest"
	"github.com/ordersink/orders-consumer/orders"
	"github.com/ordersink/orders-consumer/orders/orderstest"
)

// lastLogLine is the structured line of the last invocation s answered.
func lastLogLine(t *testing.T, s *testServer) map[string]any {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(s.Logs.String()), "\n")
	var line map[string]any
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &line); err != nil {
		t.Fatalf("log line is not JSON: %q", lines[len(lines)-1])
	}
	return line
}

// Against the Cosmos emulator, which charges 1 request unit per response: a
// new order is one transactional batch, a duplicate the batch's 409 and one
// point read of the stored fingerprint.
func TestProcessOrderLogsDuplicateCauseAndRequestCharge(t *testing.T) {
	s := startServer(t, testEnv(t).Store, 0)
	id, body := handlertest.UniqueOrder(t)
	messageID := orders.MessageID(id, body)
	resent := bytes.Replace(body, []byte(`"producer":"web-shop"`), []byte(`"producer":"retry-job"`), 1)

	for _, tc := range []struct {
		name      string
		body      []byte
		messageID string
		delivery  int
		outcome   string
		cause     any // nil: no duplicateCause field
		charge    float64
	}{
		{"first delivery", body, messageID, 1, "created", nil, 1},
		{"the same message again", body, messageID, 2, "duplicate", "redelivery", 2},
		{"resent under another MessageId", resent, orders.MessageID(id, resent), 1, "duplicate", "resend", 2},
		{"resent under the same MessageId after the window", body, messageID, 1, "duplicate", "resend", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s.invoke(t, hostInvocation(tc.body, tc.messageID, tc.delivery))
			line := lastLogLine(t, s)
			if line["outcome"] != tc.outcome || line["duplicateCause"] != tc.cause || line["requestCharge"] != tc.charge {
				t.Errorf("outcome %v, duplicateCause %v, requestCharge %v; want %s, %v, %v",
					line["outcome"], line["duplicateCause"], line["requestCharge"], tc.outcome, tc.cause, tc.charge)
			}
		})
	}
}

// A delivery that tried to create the order before the stored one was
// accepted lost a race with a delivery in flight at the same time. The
// processor's clock is set so that the losing delivery's attempt is the
// earlier one.
func TestProcessOrderDuplicateCauseConcurrentDelivery(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)
	clock := t0
	store := orderstest.NewMemStore()
	s := startServerWith(t, Config{Processor: &orders.Processor{Store: store, Now: func() time.Time { return clock }}})
	id, body := handlertest.UniqueOrder(t)
	s.invoke(t, hostInvocation(body, id, 1))

	clock = t0.Add(-time.Millisecond) // began before the winner accepted the order
	s.invoke(t, hostInvocation(body, id, 1))
	if line := lastLogLine(t, s); line["outcome"] != "duplicate" || line["duplicateCause"] != "concurrentDelivery" {
		t.Errorf("outcome %v, duplicateCause %v; want duplicate, concurrentDelivery", line["outcome"], line["duplicateCause"])
	}
	if _, ok := lastLogLine(t, s)["requestCharge"]; ok {
		t.Error("a store that reports no request units logged a requestCharge")
	}
}
