package orders

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// withMember returns validBody with a member inserted as raw text, so that
// names a Go string cannot hold (lone surrogates) can be sent too.
func withMember(rawMember string) string {
	return "{" + rawMember + "," + strings.TrimPrefix(validBody, "{")
}

// members returns an object of n members in ascending order of name: the
// order that cost gowebpki/jcs the most (each name was inserted into a list
// after a scan from its front).
func members(n int) string {
	var b strings.Builder
	b.WriteByte('{')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"k%05d":0`, i)
	}
	b.WriteByte('}')
	return b.String()
}

func nested(levels int) string {
	return strings.Repeat("[", levels) + strings.Repeat("]", levels)
}

// zeros returns an array of n zeros: n+1 JSON values.
func zeros(n int) string {
	return "[" + strings.TrimSuffix(strings.Repeat("0,", n), ",") + "]"
}

// wantRule checks that err is a MalformedMessage naming rule.
func wantRule(t *testing.T, err error, rule string) {
	t.Helper()
	var re *RejectError
	if !errors.As(err, &re) || re.Reason != MalformedMessage {
		t.Fatalf("err = %v, want MalformedMessage naming the %s", err, rule)
	}
	if !strings.Contains(re.Error(), rule) {
		t.Errorf("message %q does not name the %s", truncate(re.Error(), 300), rule)
	}
}

// TestBodyLimits: every limit of docs/contract.md §3 at and just past its
// value. The body is an order, so an accepted one must also parse.
func TestBodyLimits(t *testing.T) {
	tooManyTopLevel := strings.TrimSuffix(members(MaxMembers-6), "}") + "," + strings.TrimPrefix(validBody, "{")
	tests := []struct {
		name, body, rule string // rule "" means accepted
	}{
		{"depth 32", withField("x", nested(MaxDepth-1)), ""},
		{"depth 33", withField("x", nested(MaxDepth)), "depth limit"},
		{"1000 members", withField("x", members(MaxMembers)), ""},
		{"1001 members", withField("x", members(MaxMembers+1)), "member limit"},
		{"1001 top-level members", tooManyTopLevel, "member limit"},
		{"20000 members", withField("x", members(20_000)), "member limit"},
		{"40000 members", withField("x", members(40_000)), "member limit"},
		{"string of 65536 bytes", withField("x", `"`+strings.Repeat("a", MaxTokenBytes)+`"`), ""},
		{"string of 65537 bytes", withField("x", `"`+strings.Repeat("a", MaxTokenBytes+1)+`"`), "string length limit"},
		{"escapes count as written", withField("x", `"`+strings.Repeat(`\u00e9`, MaxTokenBytes/6+1)+`"`), "string length limit"},
		{"name of 65537 bytes", withField(strings.Repeat("n", MaxTokenBytes+1), "1"), "string length limit"},
		{"number of 65537 bytes", withField("x", "0."+strings.Repeat("0", MaxTokenBytes-2)+"1"), "string length limit"},
		{"number of 65536 bytes", withField("x", "0."+strings.Repeat("0", MaxTokenBytes-3)+"1"), "I-JSON number rule"},
		{"very long exponent", withField("x", "1e"+strings.Repeat("0", 1000)+"1"), ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseOrder([]byte(tc.body))
			if tc.rule == "" {
				if err != nil {
					t.Fatalf("refused: %v", truncate(err.Error(), 300))
				}
				return
			}
			wantRule(t, err, tc.rule)
		})
	}
}

// The value count limit, on a body that is nothing else: an object, an array
// and the array's elements.
func TestBodyValueCountLimit(t *testing.T) {
	if _, err := Fingerprint([]byte(`{"x":`+zeros(MaxValues-2)+`}`), HashVersion); err != nil {
		t.Fatalf("%d values refused: %v", MaxValues, err)
	}
	_, err := Fingerprint([]byte(`{"x":`+zeros(MaxValues-1)+`}`), HashVersion)
	wantRule(t, err, "value count limit")
}

// TestBodyIJSON: bodies outside I-JSON (RFC 7493) are refused, since RFC 8785
// would canonicalise them lossily; numbers and strings inside it pass.
func TestBodyIJSON(t *testing.T) {
	refused := map[string]string{
		"lone high surrogate then A": `"x":"\ud800\u0041"`,
		"lone high surrogate then B": `"x":"\ud800\u0042"`,
		"lone high surrogate at end": `"x":"a\ud800"`,
		"lone low surrogate":         `"x":"\udc00"`,
		"reversed pair":              `"x":"\ude00\ud83d"`,
		"lone surrogate in a name":   `"\ud800":1`,
		"lone surrogate deep":        `"x":[{"y":"\udbff"}]`,
		"integer past 2^64":          `"x":12345678901234567890`,
		"2^53+1":                     `"x":9007199254740993`,
		"18 digits":                  `"x":123456789012345678`,
		"underflow":                  `"x":1e-400`,
		"negative underflow":         `"x":-1e-400`,
		"overflow":                   `"x":1e400`,
		"more digits than a double":  `"x":0.30000000000000001`,
	}
	for name, member := range refused {
		t.Run(name, func(t *testing.T) {
			_, err := ParseOrder([]byte(withMember(member)))
			rule := "I-JSON number rule"
			if strings.Contains(member, `\u`) {
				rule = "I-JSON string rule"
			}
			wantRule(t, err, rule)
		})
	}
	accepted := []string{
		`"x":9007199254740992`, `"x":18014398509481984`, `"x":1e23`, `"x":0.1`, `"x":-0`, `"x":-0.0e5`,
		`"x":5e-324`, `"x":1.7976931348623157e308`, `"x":0.30000000000000004`, `"x":2.0e0`,
		`"x":1E+2`, `"x":100e-2`, `"x":-12.5`, `"x":-999999999999999`, `"x":"\ud83d\ude00"`, `"x":"\uFFFF"`,
	}
	for _, member := range accepted {
		t.Run(member, func(t *testing.T) {
			if _, err := ParseOrder([]byte(withMember(member))); err != nil {
				t.Fatalf("refused: %v", err)
			}
		})
	}
}

// TestFingerprintNoCollisions: pairs of different orders that the previous
// canonicaliser (gowebpki/jcs) gave one fingerprint, so the second was
// completed as a duplicate of the first. Now one of each pair is refused.
func TestFingerprintNoCollisions(t *testing.T) {
	pairs := [][2]string{
		{`"x":"\ud800\u0041"`, `"x":"\ud800\u0042"`},
		{`"x":"\ud800\u0041"`, `"x":"\ufffd"`},
		{`"x":12345678901234567890`, `"x":12345678901234567891`},
		{`"x":9007199254740993`, `"x":9007199254740992`},
		{`"x":1e-400`, `"x":0`},
		{`"x":0.30000000000000001`, `"x":0.3`},
	}
	for _, p := range pairs {
		t.Run(p[0]+" vs "+p[1], func(t *testing.T) {
			a, b := []byte(withMember(p[0])), []byte(withMember(p[1]))
			oldA, errA := jcsFingerprint(a)
			oldB, errB := jcsFingerprint(b)
			if errA != nil || errB != nil || oldA != oldB {
				t.Fatalf("the pair did not collide under gowebpki/jcs (%v, %v); it proves nothing", errA, errB)
			}
			ha, errA := Fingerprint(a, HashVersion)
			hb, errB := Fingerprint(b, HashVersion)
			if errA == nil && errB == nil {
				t.Fatalf("both accepted, fingerprints %s and %s", ha, hb)
			}
		})
	}
}

// TestDecodeObjectKeepsMembersAsSent: the stored document and the fingerprint
// see each top-level member's text exactly, white space inside it included,
// also after the caller reuses the body's buffer.
func TestDecodeObjectKeepsMembersAsSent(t *testing.T) {
	body := []byte(" {\"a\" :\t1 ,\n\"b\":[ 1, {\"c\" : \"\\u0041\"} ] ,\"\":null,\"d\\u0065\":{}}\n")
	fields, err := decodeObject(body)
	if err != nil {
		t.Fatal(err)
	}
	copy(body, bytes.Repeat([]byte("#"), len(body))) // a caller reusing its buffer
	want := map[string]string{"a": "1", "b": `[ 1, {"c" : "\u0041"} ]`, "": "null", "de": "{}"}
	if len(fields) != len(want) {
		t.Errorf("got %d members, want %d", len(fields), len(want))
	}
	for name, raw := range want {
		if got := string(fields[name]); got != raw {
			t.Errorf("%q = %q, want %q", name, got, raw)
		}
	}
}

// TestExactBinary64AcceptsEveryDouble: the I-JSON number rule refuses no
// double written in its shortest form, in any of the spellings strconv gives,
// and refuses those digits with a trailing 1 that moves the value by less than
// half a unit in the last place, so that it reads back as the same double.
func TestExactBinary64AcceptsEveryDouble(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 5000 {
		f := math.Float64frombits(rng.Uint64())
		if math.IsNaN(f) || math.IsInf(f, 0) {
			continue
		}
		for _, format := range []byte{'e', 'E', 'f', 'g'} {
			s := strconv.FormatFloat(f, format, -1, 64)
			if !exactBinary64([]byte(s)) {
				t.Fatalf("refused %s, a double in its shortest form", s)
			}
		}
		if f == 0 {
			continue
		}
		// A 1 in the 20th significant digit moves the value by far less than
		// half an ulp (2^-53 ≈ 1.1e-16 of it).
		mant, exp, _ := strings.Cut(strconv.FormatFloat(f, 'e', -1, 64), "e")
		if !strings.Contains(mant, ".") {
			mant += "."
		}
		digits := len(strings.Trim(mant, "-."))
		longer := mant + strings.Repeat("0", 19-digits) + "1e" + exp
		if exactBinary64([]byte(longer)) {
			t.Fatalf("accepted %s, which reads back as %s", longer, strconv.FormatFloat(f, 'e', -1, 64))
		}
	}
}
