package orders

import (
	"bytes"
	"encoding/json"
	"testing"
)

// The fast path of appendString writes what encoding/json writes, including
// for the characters it escapes (HTML-safe <, >, &, U+2028, U+2029, control
// characters, invalid UTF-8).
func TestAppendStringMatchesEncodingJSON(t *testing.T) {
	for _, s := range []string{
		"", "orderId", "ORD-2026-000123:event:OrderAccepted", "sha256:0f", "2026-11-29T10:00:02.1Z",
		`q"uote`, `back\slash`, "<tag>", "a&b", "tab\there", "nul\x00", "del\x7f", "é", "\u2028\u2029",
		"bad\xffutf8", "\x80", "a b", "~!#$%^*()_+{}[]|:;',.?/`",
	} {
		var b bytes.Buffer
		appendString(&b, s)
		want, _ := json.Marshal(s)
		if b.String() != string(want) {
			t.Errorf("appendString(%q) = %s, encoding/json writes %s", s, b.String(), want)
		}
	}
}

// Plain ASCII, which names and the consumer's own values nearly always are,
// is written without encoding/json's reflection and allocation.
func TestAppendStringWritesPlainASCIIDirectly(t *testing.T) {
	var b bytes.Buffer
	b.Grow(256)
	allocs := testing.AllocsPerRun(20, func() {
		b.Reset()
		appendString(&b, "ORD 2026-000123:event:OrderAccepted sha256:0f 2026-11-29T10:00:02.1Z ~!#$%^*()_+{}[]|;',.?/`\x7f")
	})
	if allocs != 0 {
		t.Errorf("%.0f allocations for plain ASCII, want none", allocs)
	}
}
