package producer

import (
	"errors"
	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"
	"testing"
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
