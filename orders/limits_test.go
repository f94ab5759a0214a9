package orders

import (
	"fmt"
	"strings"
	"testing"
)

// linesOf is a lines array of n lines of quantity q at unitPrice price.
func linesOf(n, q int, price string) string {
	line := fmt.Sprintf(`{"sku":"S","quantity":%d,"unitPrice":%q}`, q, price)
	return "[" + strings.TrimSuffix(strings.Repeat(line+",", n), ",") + "]"
}

// withLines is validBody with its lines and total replaced.
func withLines(lines, total string) string {
	fields, err := decodeObject([]byte(withField("lines", lines)))
	if err != nil {
		panic(err)
	}
	fields["total"] = []byte(fmt.Sprintf("%q", total))
	b, err := mergeObject(fields, nil)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// TestParseOrderAtTheLimits: each bound of docs/contract.md §3 that
// validation enforces holds at the limit and refuses one past it.
func TestParseOrderAtTheLimits(t *testing.T) {
	for _, tc := range []struct {
		name, body, refused string // refused "" means accepted
	}{
		{"customerId of 255 characters", withField("customerId", `"`+strings.Repeat("é", MaxIDLength)+`"`), ""},
		{"customerId of 256 characters", withField("customerId", `"`+strings.Repeat("é", MaxIDLength+1)+`"`), "customerId"},
		{"100 lines", withLines(linesOf(MaxLines, 1, "1"), "100"), ""},
		{"101 lines", withLines(linesOf(MaxLines+1, 1, "1"), "101"), "lines"},
		{"quantity 10000", withLines(linesOf(1, MaxQuantity, "1"), "10000"), ""},
		{"quantity 10001", withLines(linesOf(1, MaxQuantity+1, "1"), "10001"), "quantity"},
		{"unitPrice with 4 decimals", withLines(linesOf(1, 1, "0.0001"), "0.0001"), ""},
		{"unitPrice with 5 decimals", withLines(linesOf(1, 1, "0.00001"), "0.00001"), "unitPrice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseOrder([]byte(tc.body))
			switch {
			case tc.refused == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.refused != "" && (err == nil || !strings.Contains(err.Error(), tc.refused)):
				t.Fatalf("err %v, want a refusal naming %s", err, tc.refused)
			}
		})
	}
}

// TestTotalMismatchShowsTheSumAsMoney: a total that does not match names
// the lines' sum with at least two decimals, as money is written.
func TestTotalMismatchShowsTheSumAsMoney(t *testing.T) {
	for _, tc := range []struct{ price, sum string }{
		{"1.5", "1.50"}, {"2", "2.00"}, {"0.125", "0.125"}, {"1.25", "1.25"},
	} {
		_, err := ParseOrder([]byte(withLines(linesOf(1, 1, tc.price), "99")))
		if err == nil || !strings.Contains(err.Error(), "the lines add up to "+tc.sum) {
			t.Errorf("unitPrice %s, total 99: %v; want the lines' sum written %s", tc.price, err, tc.sum)
		}
	}
}
