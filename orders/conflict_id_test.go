package orders

import (
	"strings"
	"testing"
)

// TestConflictIDNamesTheOrderAndTheIncomingContent: a conflict record's id
// is the orderId and the first 16 hex digits of the incoming fingerprint, so
// redeliveries of one mismatching message meet one record; a fingerprint no
// longer than that is kept whole.
func TestConflictIDNamesTheOrderAndTheIncomingContent(t *testing.T) {
	full := "sha256:" + strings.Repeat("0123456789abcdef", 4)
	for _, tc := range []struct{ hash, want string }{
		{full, "ORD-1:conflict:0123456789abcdef"},
		{"sha256:0123456789abcdef0", "ORD-1:conflict:0123456789abcdef"},
		{"sha256:0123456789abcdef", "ORD-1:conflict:sha256:0123456789abcdef"},
		{"", "ORD-1:conflict:"},
	} {
		if got := (Conflict{OrderID: "ORD-1", IncomingHash: tc.hash}).ID(); got != tc.want {
			t.Errorf("ID of a conflict with incoming hash %q = %q, want %q", tc.hash, got, tc.want)
		}
	}
}
