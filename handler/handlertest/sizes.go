package handlertest

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/ordersink/orders-consumer/internal/hostjson"
	"github.com/ordersink/orders-consumer/orders"
	"github.com/ordersink/orders-consumer/orders/orderstest"
)

// FixedNow makes envelopes and events the same size on every run.
func FixedNow() time.Time { return time.Date(2026, 12, 1, 7, 0, 0, 123456700, time.UTC) }

// HostSize is the size of one output item as the host sends it.
func HostSize(t *testing.T, raw json.RawMessage) int {
	t.Helper()
	n, err := hostjson.Size(raw)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// OrderWithArray is the example order under id whose first line carries an
// unknown member: an array of k zeros, which the event copies and the host
// indents to a line of its own per element.
func OrderWithArray(id string, k int) []byte {
	zeros := strings.TrimSuffix(strings.Repeat("0,", k), ",")
	return []byte(strings.Replace(strings.Replace(orderstest.ExampleBody, orderstest.ExampleOrderID, id, 1),
		`"unitPrice":"19.99"`, `"unitPrice":"19.99","x":[`+zeros+`]`, 1))
}

// AcceptedEvent is the OrderAccepted event of body as the processor checks
// it against the budget and stores it (orders.AcceptanceBatch.Event),
// accepted at FixedNow.
func AcceptedEvent(t *testing.T, body []byte, messageID string) json.RawMessage {
	t.Helper()
	o, err := orders.ParseOrder(body)
	if err != nil {
		t.Fatal(err)
	}
	b, err := o.AcceptanceDocuments(orders.Acceptance{MessageID: messageID, AcceptedAt: FixedNow()})
	if err != nil {
		t.Fatal(err)
	}
	return b.Event
}

// EventSize is the size of body's OrderAccepted event as the host would
// send it.
func EventSize(t *testing.T, body []byte, messageID string) int {
	t.Helper()
	return HostSize(t, AcceptedEvent(t, body, messageID))
}
