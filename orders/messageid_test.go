package orders

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestMessageID(t *testing.T) {
	body := []byte(`{"orderId":"ORD-1","total":"1.00"}`)
	id := MessageID("ORD-1", body)
	if !strings.HasPrefix(id, "ORD-1:") || len(id) != len("ORD-1:")+hashHexDigits {
		t.Fatalf("MessageID = %q, want ORD-1:<16 hex>", id)
	}
	if again := MessageID("ORD-1", append([]byte(nil), body...)); again != id {
		t.Errorf("same bytes gave %q then %q", id, again)
	}
	if other := MessageID("ORD-1", []byte(`{"orderId":"ORD-1","total":"2.00"}`)); other == id {
		t.Errorf("other content gave the same MessageId %q", id)
	}
	if spaced := MessageID("ORD-1", []byte(`{"orderId": "ORD-1","total":"1.00"}`)); spaced == id {
		t.Errorf("other bytes of equal content gave the same MessageId %q: the rule hashes bytes", id)
	}
}

func TestMessageIDLongOrderIDs(t *testing.T) {
	body := []byte(`{}`)
	for _, tc := range []struct {
		name    string
		orderID string
		kept    bool
	}{
		{"96 characters kept", strings.Repeat("a", 96), true},
		{"97 characters cut", strings.Repeat("a", 97), false},
		{"255 characters cut", strings.Repeat("b", 255), false},
		{"255 multi-byte characters cut", strings.Repeat("é", 255), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id := MessageID(tc.orderID, body)
			if n := utf8.RuneCountInString(id); n > MaxMessageIDLength {
				t.Fatalf("MessageId has %d characters, limit %d", n, MaxMessageIDLength)
			}
			if !utf8.ValidString(id) {
				t.Fatalf("MessageId %q is not valid UTF-8", id)
			}
			if got := strings.HasPrefix(id, tc.orderID+":"); got != tc.kept {
				t.Errorf("orderId kept whole = %v, want %v (%q)", got, tc.kept, id)
			}
		})
	}
	// Two long orderIds that share their first 80 characters must differ.
	a := MessageID(strings.Repeat("x", 80)+"-one-"+strings.Repeat("y", 20), body)
	b := MessageID(strings.Repeat("x", 80)+"-two-"+strings.Repeat("y", 20), body)
	if a == b {
		t.Errorf("long orderIds with a common prefix share MessageId %q", a)
	}
}
