package producer

import (
	"errors"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"
)

func TestOrderAndStatusMessage(t *testing.T) {
	body := []byte(`{"orderId":"ORD-7","status":"Shipped","version":3}`)
	for _, tc := range []struct {
		build   func([]byte) (*azservicebus.Message, error)
		subject string
	}{{OrderMessage, SubjectOrderPlaced}, {StatusMessage, SubjectOrderStatusChanged}} {
		m, err := tc.build(body)
		if err != nil {
			t.Fatal(err)
		}
		if *m.Subject != tc.subject || *m.ContentType != "application/json" || *m.MessageID != MessageID("ORD-7", body) || string(m.Body) != string(body) {
			t.Errorf("%s: got subject %q type %q id %q body %s", tc.subject, *m.Subject, *m.ContentType, *m.MessageID, m.Body)
		}
	}
	for _, bad := range []string{`{"orderId":7}`, `{}`, `{"orderId":""}`, `not json`} {
		if _, err := OrderMessage([]byte(bad)); err == nil {
			t.Errorf("OrderMessage(%s) built a message", bad)
		} else if bad != "not json" && bad != `{"orderId":7}` && !errors.Is(err, ErrNoOrderID) {
			t.Errorf("OrderMessage(%s): %v, want ErrNoOrderID", bad, err)
		}
	}
}

// Known answers for producers in other languages, computed outside Go
// (printf '%s' BODY | sha256sum; Python's hashlib for the long orderId), as
// docs/contract.md §3 gives them.
func TestMessageIDKnownAnswers(t *testing.T) {
	long := "ORD-" + strings.Repeat("x", 120) // 124 characters: cut to 80, "~", its own hash
	for _, tc := range []struct {
		orderID, body, want string
	}{
		{"ORD-2026-000123", `{"orderId":"ORD-2026-000123","total":"44.98"}`, "ORD-2026-000123:6fc01b089c5c9d61"},
		{long, `{}`, long[:80] + "~2674576db89b3d77:44136fa355b3678a"},
	} {
		if got := MessageID(tc.orderID, []byte(tc.body)); got != tc.want {
			t.Errorf("MessageID(%.20s…, %s) = %s, want %s", tc.orderID, tc.body, got, tc.want)
		}
	}
}
