package orders

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParseOrder: any body either parses into an order whose fingerprint and
// document are consistent, or is rejected with a reason; never a panic.
// Seeds: the contract's example and the bad-input corpus.
func FuzzParseOrder(f *testing.F) {
	f.Add([]byte(validBody))
	files, _ := filepath.Glob(filepath.Join("..", "handler", "testdata", "corpus", "*.body"))
	for _, name := range files {
		if b, err := os.ReadFile(name); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		o, err := ParseOrder(body)
		if err != nil {
			var re *RejectError
			if !errors.As(err, &re) || (re.Reason != MalformedMessage && re.Reason != ValidationFailed) || re.Error() == "" {
				t.Fatalf("rejection without a reason: %#v", err)
			}
			return
		}
		if err := CheckOrderID(o.ID); err != nil {
			t.Fatalf("accepted an invalid orderId %q: %v", o.ID, err)
		}
		again, err := Fingerprint(body, HashVersion)
		if err != nil || again != o.Hash {
			t.Fatalf("fingerprint not reproducible: %s vs %s (%v)", o.Hash, again, err)
		}
		doc, err := o.Document(Acceptance{MessageID: "m"})
		if err != nil || !json.Valid(doc) {
			t.Fatalf("document is not JSON: %v %s", err, doc)
		}
		// The stored document, read back as a body, is the same order: the
		// bookkeeping fields are reserved, so they cannot collide.
		var m map[string]json.RawMessage
		if err := json.Unmarshal(doc, &m); err != nil || string(m["id"]) != mustJSON(o.ID) {
			t.Fatalf("document id %s, want %s", m["id"], mustJSON(o.ID))
		}
	})
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// newRules are the rules by which the jsontext canonicaliser refuses bodies
// that gowebpki/jcs accepted (docs/contract.md §3, "Differences" 1.4). The
// duplicate name rule is among them for one case: gowebpki/jcs lets a
// nested object repeat the empty name ({"meta":{"":"","":""}}, found by this
// target; kept in testdata), which the current rule refuses as it refuses
// every other repeated name.
var newRules = []string{"depth limit", "member limit", "string length limit", "value count limit",
	"I-JSON number rule", "I-JSON string rule", "duplicate name rule"}

// FuzzFingerprintMatchesJCS is the differential test of hashVersion 1: every
// body that both the previous canonicaliser (jcs_oracle_test.go) and the
// current one accept has the same fingerprint, so no stored requestHash
// changes meaning; a body only the previous one accepted is refused by a
// rule the contract names, never as "not valid JSON"; and no body the previous
// one refused is accepted now.
func FuzzFingerprintMatchesJCS(f *testing.F) {
	for _, seed := range []string{
		validBody, `{}`, `{"":0}`, `{"meta":1,"a":[]}`, `{"\u006deta":{"x":1},"b":true}`,
		`{"n":[0,-0,1e23,0.1,5e-324,1.7976931348623157e308,100e-2,1E+2,-12.50,9007199254740992]}`,
		`{"n":[12345678901234567890,1e-400,1e400,0.30000000000000001]}`,
		`{"s":"\u0000\u001f\u007f\u2028\u2029\/\"\\\b\f\n\r\t é😀"}`,
		`{"\ud83d\ude00":1,"\uffff":2,"é":3,"e":4,"E":5}`,
		`{"s":"\ud800\u0041","t":"\udc00","u":"\ud83d\ude00"}`,
		`{"a":{"b":{"b":1,"a":2}},"a ":[{"z":null,"y":false}]}`,
		`{"a":1,"a":2}`, `{"x":{"a":1,"\u0061":2}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		old, oldErr := jcsFingerprint(body)
		got, err := Fingerprint(body, HashVersion)
		switch {
		case oldErr == nil && err == nil && old != got:
			t.Fatalf("fingerprint changed for a body both accept: %s, was %s", got, old)
		case oldErr != nil && err == nil:
			t.Fatalf("accepted a body gowebpki/jcs refused (%v): the new rules only refuse more", oldErr)
		case oldErr == nil && err != nil && !namesOneOf(err.Error(), newRules):
			t.Fatalf("refused a body gowebpki/jcs accepted, by no new rule: %v", err)
		}
	})
}

func namesOneOf(s string, rules []string) bool {
	for _, r := range rules {
		if strings.Contains(s, r) {
			return true
		}
	}
	return false
}
