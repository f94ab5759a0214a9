package orders_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	. "github.com/ordersink/orders-consumer/orders"
	"github.com/ordersink/orders-consumer/orders/orderstest"
)

func TestParseMessageType(t *testing.T) {
	tests := []struct {
		subject string
		want    MessageType
	}{
		{"", OrderPlaced},
		{"  ", OrderPlaced},
		{"OrderPlaced", OrderPlaced},
		{"order.created", OrderPlaced}, // a producer's own routing subject
		{"OrderStatusChanged", OrderStatusChanged},
		{"ORDERSTATUSCHANGED", OrderStatusChanged},
		{" orderStatusChanged ", OrderStatusChanged},
	}
	for _, tc := range tests {
		if got := ParseMessageType(tc.subject); got != tc.want {
			t.Errorf("ParseMessageType(%q) = %q, want %q", tc.subject, got, tc.want)
		}
	}
}

func TestParseStatusChange(t *testing.T) {
	valid := `{"orderId":"ORD-1","status":"Shipped","version":3,"changedAt":"2026-11-29T12:30:00Z","meta":{"producer":"warehouse"},"carrier":"DHL"}`
	c, err := ParseStatusChange([]byte(valid))
	if err != nil || c.OrderID != "ORD-1" || c.Status != "Shipped" || c.Version != 3 || !c.ChangedAt.Equal(time.Date(2026, 11, 29, 12, 30, 0, 0, time.UTC)) {
		t.Fatalf("%+v, %v", c, err)
	}
	rejects := []struct {
		name, body, field string
		reason            Reason
	}{
		{"not JSON", `{"orderId":`, "", MalformedMessage},
		{"duplicate key", `{"orderId":"A","orderId":"B","status":"Paid","version":1,"changedAt":"2026-11-29T12:30:00Z"}`, "", MalformedMessage},
		{"no orderId", `{"status":"Paid","version":1,"changedAt":"2026-11-29T12:30:00Z"}`, "orderId", ValidationFailed},
		{"orderId with a slash", `{"orderId":"A/B","status":"Paid","version":1,"changedAt":"2026-11-29T12:30:00Z"}`, "orderId", ValidationFailed},
		{"no status", `{"orderId":"A","version":1,"changedAt":"2026-11-29T12:30:00Z"}`, "status", ValidationFailed},
		{"empty status", `{"orderId":"A","status":"","version":1,"changedAt":"2026-11-29T12:30:00Z"}`, "status", ValidationFailed},
		{"status too long", `{"orderId":"A","status":"` + strings.Repeat("a", 65) + `","version":1,"changedAt":"2026-11-29T12:30:00Z"}`, "status", ValidationFailed},
		{"no version", `{"orderId":"A","status":"Paid","changedAt":"2026-11-29T12:30:00Z"}`, "version", ValidationFailed},
		{"version as string", `{"orderId":"A","status":"Paid","version":"1","changedAt":"2026-11-29T12:30:00Z"}`, "version", ValidationFailed},
		{"version zero", `{"orderId":"A","status":"Paid","version":0,"changedAt":"2026-11-29T12:30:00Z"}`, "version", ValidationFailed},
		{"version negative", `{"orderId":"A","status":"Paid","version":-2,"changedAt":"2026-11-29T12:30:00Z"}`, "version", ValidationFailed},
		{"version fraction", `{"orderId":"A","status":"Paid","version":1.5,"changedAt":"2026-11-29T12:30:00Z"}`, "version", ValidationFailed},
		{"version past 2^53", `{"orderId":"A","status":"Paid","version":9007199254740992,"changedAt":"2026-11-29T12:30:00Z"}`, "version", ValidationFailed},
		// A double cannot hold this one as written: every body is I-JSON (ijson.go).
		{"version not a double", `{"orderId":"A","status":"Paid","version":9007199254740993,"changedAt":"2026-11-29T12:30:00Z"}`, "", MalformedMessage},
		{"changedAt without zone", `{"orderId":"A","status":"Paid","version":1,"changedAt":"2026-11-29T12:30:00"}`, "changedAt", ValidationFailed},
	}
	for _, tc := range rejects {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseStatusChange([]byte(tc.body))
			var re *RejectError
			if !errors.As(err, &re) || re.Reason != tc.reason || re.Field != tc.field {
				t.Errorf("error %v, want %s on %q", err, tc.reason, tc.field)
			}
		})
	}
	for _, v := range []string{"1", "2.0", "3e2", "9007199254740991"} {
		if _, err := ParseStatusChange([]byte(`{"orderId":"A","status":"Paid","version":` + v + `,"changedAt":"2026-11-29T12:30:00Z"}`)); err != nil {
			t.Errorf("version %s refused: %v", v, err)
		}
	}
}

func TestProcessorStatusChanges(t *testing.T) {
	ctx := context.Background()
	store := orderstest.NewMemStore()
	p := &Processor{Store: store}
	msg := func(status string, version, delivery int) Message {
		body := `{"orderId":"ORD-1","status":"` + status + `","version":` + strconv.Itoa(version) + `,"changedAt":"2026-11-29T12:30:00Z"}`
		return Message{Body: []byte(body), MessageID: "ORD-1:status", DeliveryCount: delivery, Type: "OrderStatusChanged"}
	}
	steps := []struct {
		msg       Message
		outcome   Outcome
		stored    int64
		conflict  bool
		completes bool
	}{
		{msg("Paid", 2, 1), Applied, 0, false, true},
		{msg("Paid", 2, 2), Stale, 2, false, true},
		{msg("Placed", 1, 1), Stale, 2, false, true},
		{msg("Cancelled", 2, 1), Stale, 2, true, true},
		{msg("Shipped", 4, 1), Applied, 2, false, true},
	}
	for i, st := range steps {
		r := p.Process(ctx, st.msg)
		if r.Outcome != st.outcome || r.StoredVersion != st.stored || r.VersionConflict != st.conflict ||
			r.Kind != OrderStatusChanged || r.OrderID != "ORD-1" || r.Outcome.Completes() != st.completes || r.Outcome.Parks() {
			t.Errorf("step %d: %+v", i, r)
		}
	}

	store.Fail = &StoreError{Op: "apply status", OrderID: "ORD-1", IsTransient: true, Err: errors.New("503")}
	if r := p.Process(ctx, msg("Delivered", 5, 1)); r.Outcome != Transient {
		t.Errorf("store down: %+v", r)
	}
	if r := p.Process(ctx, msg("Delivered", 5, DefaultRetryBudget)); r.Outcome != Exhausted || r.Reason != RetryBudgetExhausted {
		t.Errorf("store down at the last attempt: %+v", r)
	}
	store.Fail = nil
	onlyOrders := struct{ Store }{orderstest.NewMemStore()}
	if r := (&Processor{Store: onlyOrders}).Process(ctx, msg("Paid", 1, 1)); r.Outcome != Transient || r.Err == nil {
		t.Errorf("no status store: %+v", r)
	}
	// Any Subject but OrderStatusChanged is an order: producers may route
	// orders by Subject, and the contract does not constrain it.
	if r := p.Process(ctx, Message{Body: []byte(exampleBody), Type: "order.created"}); r.Outcome != Created {
		t.Errorf("order with a routing Subject: %+v", r)
	}
}
