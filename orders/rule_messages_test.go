package orders

import (
	"strings"
	"testing"
)

// TestRuleBreachesSayWhereAndWhat: a refusal of docs/contract.md §3 names
// where in the body it broke (a JSON Pointer, "/" for the body's own
// object) and, for a duplicate, the name: what a producer needs to fix it.
func TestRuleBreachesSayWhereAndWhat(t *testing.T) {
	for _, tc := range []struct{ body, want string }{
		{`{"x":1,"x":2}`, `at "/x": an object has the name "x" twice`},
		{`{"a":{"y":1,"y":2}}`, `at "/a/y": an object has the name "y" twice`},
		{`{"\ud800":1}`, `I-JSON string rule of docs/contract.md §3 at /: `},
	} {
		_, err := ParseOrder([]byte(tc.body))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v; want it to say %q", tc.body, err, tc.want)
		}
	}
}

// TestTruncateKeepsAStringOfTheLimit: a string of n characters is kept
// whole; a longer one is cut to n and marked.
func TestTruncateKeepsAStringOfTheLimit(t *testing.T) {
	for _, tc := range []struct {
		s    string
		n    int
		want string
	}{
		{"abc", 3, "abc"},
		{"éèê", 3, "éèê"},
		{"abcd", 3, "abc…"},
	} {
		if got := truncate(tc.s, tc.n); got != tc.want {
			t.Errorf("truncate(%q, %d) = %q, want %q", tc.s, tc.n, got, tc.want)
		}
	}
}
