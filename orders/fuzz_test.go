package orders

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
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
