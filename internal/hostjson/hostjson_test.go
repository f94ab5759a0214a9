package hostjson

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestIndent(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"object", `{"a":1,"b":[1,2],"c":{},"d":[]}`, "{\n  \"a\": 1,\n  \"b\": [\n    1,\n    2\n  ],\n  \"c\": {},\n  \"d\": []\n}"},
		{"escapes", `{"s":"<a&b>\u2028\u0001\u00e9\n"}`, "{\n  \"s\": \"<a&b>\\u2028\\u0001\u00e9\\n\"\n}"},
		{"numbers", `[19.90,1e5,1e15,12345678901234567890,-0.0,1e-7,1e400,0]`,
			"[\n  19.9,\n  100000.0,\n  1E+15,\n  12345678901234567890,\n  -0.0,\n  1E-07,\n  \"Infinity\",\n  0\n]"},
		{"dates", `["2026-11-29T10:00:00.1230000Z","2026-11-29T10:00:00+01:00","2026-11-29T10:00:00","2026-11-29T10:00:00.123456789Z","2026-11-29"]`,
			"[\n  \"2026-11-29T10:00:00.123Z\",\n  \"2026-11-29T09:00:00+00:00\",\n  \"2026-11-29T10:00:00\",\n  \"2026-11-29T10:00:00.123456789Z\",\n  \"2026-11-29\"\n]"},
		{"scalars", `{"t":true,"f":false,"n":null}`, "{\n  \"t\": true,\n  \"f\": false,\n  \"n\": null\n}"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := Indent([]byte(c.in))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != c.want {
				t.Errorf("Indent(%s)\n got %q\nwant %q", c.in, got, c.want)
			}
		})
	}
}

func TestIndentRefusesWhatIsNotOneValue(t *testing.T) {
	for _, in := range []string{``, `{`, `{"a":1} {}`, `[1,]`} {
		if _, err := Indent([]byte(in)); err == nil {
			t.Errorf("Indent(%q) succeeded", in)
		}
	}
}

// A flat array of small numbers is where indentation costs most: each
// two-byte element takes a line of its own.
func TestIndentGrowth(t *testing.T) {
	in := "{\"x\":[" + strings.Repeat("0,", 999) + "0]}"
	n, err := Size([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if want := len("{\n  \"x\": [\n") + 1000*len("    0,\n") - 2 + len("\n  ]\n}"); n != want {
		t.Errorf("Size = %d, want %d", n, want)
	}
}

// FuzzMaxSizeBoundsSize: for any JSON value as Go writes it, the cheap
// bound is at least the exact size as the host sends it.
func FuzzMaxSizeBoundsSize(f *testing.F) {
	for _, s := range []string{`{"a":[1e5,1e14,-0.0,"2026-11-29T10:00:00+01:00"]}`, `["\u0085\u0085",{},[],[[[]]]]`, `{"a":{"b":{"c":[0,0,0]}}}`, `"x"`, `1e-7`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		var v any
		if !utf8.Valid(in) || json.Unmarshal(in, &v) != nil {
			return
		}
		// As Go writes a decoded value, and as it writes a json.RawMessage
		// (the producer's text, compacted): numbers keep their spelling.
		remarshalled, err := json.Marshal(v)
		if err != nil {
			return
		}
		var compact bytes.Buffer
		_ = json.Compact(&compact, in)
		for _, raw := range [][]byte{remarshalled, compact.Bytes()} {
			n, err := Size(raw)
			if err != nil {
				t.Fatal(err)
			}
			if bound := MaxSize(raw); bound < n {
				t.Fatalf("MaxSize %d < Size %d for %s", bound, n, raw)
			}
		}
	})
}
