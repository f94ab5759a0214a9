package orderstream

import "testing"

func TestParseEnvelope(t *testing.T) {
	e, err := ParseEnvelope(`{"reason":"MalformedMessage","orderId":"","deliveryCount":2,"body":"/w==","bodyEncoding":"base64"}`)
	if err != nil || e.Reason != "MalformedMessage" || e.DeliveryCount != 2 || string(e.RawBody) != "\xff" {
		t.Errorf("base64 body: %+v, %v", e, err)
	}
	e, err = ParseEnvelope(`{"reason":"HashMismatch","orderId":"ORD-1","storedHash":"s","incomingHash":"i","body":"{\"a\":1}"}`)
	if err != nil || e.StoredHash != "s" || e.IncomingHash != "i" || string(e.RawBody) != `{"a":1}` {
		t.Errorf("text body: %+v, %v", e, err)
	}
	for _, bad := range []string{`{"reason":`, `{"body":"%%","bodyEncoding":"base64"}`} {
		if _, err := ParseEnvelope(bad); err == nil {
			t.Errorf("ParseEnvelope(%s) accepted", bad)
		}
	}
}
