package hostjson

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"
)

// allowances counts what MaxSize adds over the exact size: numberAllowance
// per number, stringAllowance per string (names included).
func allowances(t *testing.T, raw string) int {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.UseNumber()
	n := 0
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return n
		}
		if err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		switch tok.(type) {
		case string:
			n += stringAllowance
		case json.Number:
			n += numberAllowance
		}
	}
}

// TestMaxSizeIsTheLayoutPlusItsAllowances: the fast bound is exact about the
// host's layout (two spaces per level, a line per value, "name": value,
// empty containers on one line) and adds only its documented allowances. A
// bound short of the layout would let an output over the budget through the
// fast path (docs/adr/0009-output-size-budgets.md); one over it would send
// outputs to the slow path for nothing. The inputs hold no dates and no
// numbers the host re-prints longer, so Size is their exact host form.
func TestMaxSizeIsTheLayoutPlusItsAllowances(t *testing.T) {
	for _, raw := range []string{
		`null`, `[]`, `{}`, `[null]`, `[[]]`, `[{}]`, `[[],{}]`,
		`[null,true,false]`, `[[null],[[true]],[[[false]]]]`,
		`{"a":null}`, `{"a":{"b":{"c":[null,[],{}]}}}`, `[{"a":[]},{"b":{}},{}]`,
		`[0]`, `[9]`, `[-12]`, `[0,100,9,-9]`, `[1.5,-0.25]`, `{"n":[[0],[[9]]]}`,
		`"x"`, `["a",""]`, `{"":""}`,
		`["quote \" inside","backslash \\","\\\\",",:[]{}","a\nb"]`,
		`{"k\"":"v\\","x":["]","}",",",":"]}`,
		"[\"\u0085\",\"a\u0085\u0085b\"]",
		`[{"a":[{"b":[{"c":[1,2,[3,[4]]]}]}]}]`,
	} {
		size, err := Size([]byte(raw))
		if err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		if want, got := size+allowances(t, raw), MaxSize([]byte(raw)); got != want {
			t.Errorf("MaxSize(%s) = %d, want the host's %d bytes plus allowances: %d", raw, got, size, want)
		}
	}
}

// TestIndentIsTwoSpacesPerLevel builds the host's form of nested arrays by
// hand: a line per value, indented two spaces per level.
func TestIndentIsTwoSpacesPerLevel(t *testing.T) {
	for depth := 1; depth <= 12; depth++ {
		raw := strings.Repeat("[", depth) + "null,true" + strings.Repeat("]", depth)
		var want bytes.Buffer
		for d := range depth {
			want.WriteString(strings.Repeat("  ", d) + "[\n")
		}
		pad := strings.Repeat("  ", depth)
		want.WriteString(pad + "null,\n" + pad + "true\n")
		for d := depth - 1; d >= 0; d-- {
			want.WriteString(strings.Repeat("  ", d) + "]")
			if d > 0 {
				want.WriteString("\n")
			}
		}
		got, err := Indent([]byte(raw))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != want.String() {
			t.Errorf("depth %d:\n got %q\nwant %q", depth, got, want.String())
		}
		if n := MaxSize([]byte(raw)); n != want.Len() {
			t.Errorf("depth %d: MaxSize %d, want %d", depth, n, want.Len())
		}
	}
}

// TestIndentAtTheBoundariesOfItsRules: where .NET switches between fixed and
// exponent notation, pads an exponent, drops a fraction's zeros, and where a
// string stops being a date or a character stops being escaped.
func TestIndentAtTheBoundariesOfItsRules(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`1e-4`, `0.0001`},
		{`1e-5`, `1E-05`},
		{`1e14`, `100000000000000.0`},
		{`1e-10`, `1E-10`},
		{`1e-9`, `1E-09`},
		{`0.125`, `0.125`},
		{`-2.5e-3`, `-0.0025`},
		{`"a b"`, `"a b"`},
		{"\"\\u001f\"", `"\u001f"`},
		{`"2026-11-29T10:00:00.5"`, `"2026-11-29T10:00:00.5"`},
		{`"2026-11-29T10:00:00.90Z"`, `"2026-11-29T10:00:00.9Z"`},
		{`"2026-11-29T10:00:00.1234560+01:00"`, `"2026-11-29T09:00:00.123456+00:00"`},
		{`"2026-11-29T10:00:00.12345678+01:00"`, `"2026-11-29T10:00:00.12345678+01:00"`},
	} {
		got, err := Indent([]byte(c.in))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != c.want {
			t.Errorf("Indent(%s) = %s, want %s", c.in, got, c.want)
		}
	}
}
