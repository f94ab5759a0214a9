package orders

import (
	"os"
	"strings"
	"testing"
)

// worstBodies are orders within every limit of up to 230 KB (a Standard
// namespace allows 256 KB per message), each built to cost the most in one
// part of the parse, and the 20,000- and 40,000-member bodies that cost
// gowebpki/jcs seconds (issue 10; docs/adr/0001-dedup-key-and-fingerprint.md).
func worstBodies() []struct{ name, body string } {
	const size = 230 << 10
	fill := func(unit string) string { // a JSON array of unit repeated to about size bytes
		return "[" + strings.TrimSuffix(strings.Repeat(unit+",", size/(len(unit)+1)), ",") + "]"
	}
	object := strings.ReplaceAll(members(MaxMembers), `"k`, `"name-of-item-k`)
	objects := "[" + strings.TrimSuffix(strings.Repeat(object+",", MaxValues/MaxMembers-1), ",") + "]"
	escapes := fill(`"` + strings.Repeat(`\u00e9`, 4<<10) + `"`)
	deep := strings.Replace(nested(MaxDepth-2), "[]", `["`+strings.Repeat("a", 2000)+`"]`, 1)
	return []struct{ name, body string }{
		{"20000 members (refused)", withField("x", members(20_000))},
		{"40000 members (refused)", withField("x", members(40_000))},
		{"216 KB of 1000-member objects", withField("x", objects)},
		{"230 KB of 17-digit numbers", withField("x", fill("-1.2345678901234568e-300"))},
		{"230 KB of escaped strings", withField("x", escapes)},
		{"10,000 values (20 KB)", withField("x", zeros(MaxValues-100))},
		{"230 KB at depth 32", withField("x", fill(deep))},
	}
}

// BenchmarkParseOrderWorstCase: ParseOrder (limits, canonical form, SHA-256,
// validation) on each worst body; refused ones stop at the first breach.
func BenchmarkParseOrderWorstCase(b *testing.B) {
	for _, c := range worstBodies() {
		b.Run(c.name, func(b *testing.B) {
			body := []byte(c.body)
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				_, _ = ParseOrder(body)
			}
		})
	}
}

// BenchmarkFingerprintBefore: the same bodies and the contract's example
// through the previous code (jcs_oracle_test.go), for ADR 0001's figures. The
// 20,000- and 40,000-member bodies cost it seconds per op, so it runs only
// with ORDERS_BENCH_BEFORE=1, not in every make bench.
func BenchmarkFingerprintBefore(b *testing.B) {
	if os.Getenv("ORDERS_BENCH_BEFORE") == "" {
		b.Skip("set ORDERS_BENCH_BEFORE=1 to measure the previous canonicaliser")
	}
	cases := append([]struct{ name, body string }{{"typical", validBody}}, worstBodies()...)
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			body := []byte(c.body)
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				_, _ = jcsFingerprint(body)
			}
		})
	}
}
