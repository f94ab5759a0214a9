package orders

import (
	"encoding/json"
	"testing"
)

// TestStatusVersionSpelledAsAFloat: a version written as a float is the
// integer it names when that integer is within 1 to 2^53−1, bounds
// included, and refused otherwise.
func TestStatusVersionSpelledAsAFloat(t *testing.T) {
	for _, tc := range []struct {
		raw  string
		want int64 // 0: refused
	}{
		{"1.0", 1},
		{"3e0", 3},
		{"9007199254740991.0", maxVersion},
		{"0.0", 0},
		{"1.5", 0},
		{"9007199254740992.0", 0},
	} {
		v, err := requiredVersion(map[string]json.RawMessage{"version": json.RawMessage(tc.raw)})
		if (err == nil) != (tc.want != 0) || v != tc.want {
			t.Errorf("version %s: %d, %v; want %d", tc.raw, v, err, tc.want)
		}
	}
}

// TestStoredFingerprintOfAnUnknownRule: a stored fingerprint computed under
// a rule version this consumer does not know is an error, never taken for a
// mismatch (which would park a possible duplicate) or a match.
func TestStoredFingerprintOfAnUnknownRule(t *testing.T) {
	o, err := ParseOrder([]byte(validBody))
	if err != nil {
		t.Fatal(err)
	}
	same, err := sameFingerprint(o, &StoredFingerprint{Hash: "sha256:x", Version: HashVersion + 1})
	if err == nil {
		t.Errorf("a stored fingerprint of hashVersion %d: same content %v, no error; want an error", HashVersion+1, same)
	}
}
