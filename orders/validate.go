package orders

import (
	"encoding/json"
	"fmt"
	"math/big"
	"regexp"
	"sort"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Limits of docs/contract.md §3.
const (
	MaxIDLength  = 255
	MaxLines     = 100
	MaxQuantity  = 10000
	maxFractions = 4
)

var (
	currencyPattern = regexp.MustCompile(`^[A-Z]{3}$`)
	decimalPattern  = regexp.MustCompile(`^-?[0-9]+(\.[0-9]+)?$`)
)

// validate applies the rules of docs/contract.md §3 and fills the typed fields.
// Rules are checked in a fixed order so a message always gets the same reason.
func (o *Order) validate() error {
	names := make([]string, 0, len(o.fields))
	for k := range o.fields {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if reserved[k] || strings.HasPrefix(k, "_") {
			return invalid(k, "is a name the stored document reserves for itself; rename the field")
		}
	}

	var err error
	if o.ID, err = o.requiredString("orderId"); err != nil {
		return err
	}
	if err := CheckOrderID(o.ID); err != nil {
		return err
	}
	if o.CustomerID, err = o.requiredString("customerId"); err != nil {
		return err
	}
	if strings.TrimSpace(o.CustomerID) == "" {
		return invalid("customerId", "must not be blank")
	}
	if n := utf8.RuneCountInString(o.CustomerID); n > MaxIDLength {
		return invalid("customerId", "is %d characters long; at most %d are allowed", n, MaxIDLength)
	}
	if o.Currency, err = o.requiredString("currency"); err != nil {
		return err
	}
	if !currencyPattern.MatchString(o.Currency) {
		return invalid("currency", "must be three upper-case letters (ISO 4217, e.g. \"EUR\"), got %q", truncate(o.Currency, 20))
	}
	sum, err := o.validateLines()
	if err != nil {
		return err
	}
	if o.Total, err = o.requiredString("total"); err != nil {
		return err
	}
	total, err := parseMoney("total", o.Total, -1)
	if err != nil {
		return err
	}
	if total.Cmp(sum) != 0 {
		return invalid("total", "is %s but the lines add up to %s", o.Total, formatMoney(sum))
	}
	placedAt, err := o.requiredString("placedAt")
	if err != nil {
		return err
	}
	if o.PlacedAt, err = time.Parse(time.RFC3339Nano, placedAt); err != nil {
		return invalid("placedAt", "must be an RFC 3339 timestamp such as \"2026-11-29T10:00:00Z\", got %q", truncate(placedAt, 40))
	}
	// Members are valid JSON (decodeObject checked), so the first byte tells
	// an object.
	if raw, ok := o.fields["meta"]; ok && (len(raw) == 0 || raw[0] != '{') {
		v, err := decodeValue(raw)
		if err != nil {
			return malformed("meta: %v", err)
		}
		return invalid("meta", "must be an object, got %s", describe(v))
	}
	return nil
}

// CheckOrderID applies the orderId rules of docs/contract.md §3: it becomes a Cosmos
// id and partition key, where / \ ? # break resource paths.
func CheckOrderID(id string) error {
	n := utf8.RuneCountInString(id)
	switch {
	case n == 0:
		return invalid("orderId", "must not be empty")
	case n > MaxIDLength:
		return invalid("orderId", "is %d characters long; at most %d are allowed", n, MaxIDLength)
	case strings.ContainsAny(id, `/\?#`):
		return invalid("orderId", "must not contain any of / \\ ? # (it is the Cosmos DB id), got %q", truncate(id, 40))
	case strings.IndexFunc(id, unicode.IsControl) >= 0:
		return invalid("orderId", "must not contain control characters, got %q", truncate(id, 40))
	}
	first, _ := utf8.DecodeRuneInString(id)
	last, _ := utf8.DecodeLastRuneInString(id)
	if unicode.IsSpace(first) || unicode.IsSpace(last) {
		return invalid("orderId", "must not start or end with white space, got %q", truncate(id, 40))
	}
	return nil
}

func (o *Order) validateLines() (*big.Rat, error) {
	raw, ok := o.fields["lines"]
	if !ok {
		return nil, invalid("lines", "is required")
	}
	v, err := decodeValue(raw)
	if err != nil {
		return nil, malformed("lines: %v", err)
	}
	lines, ok := v.([]any)
	if !ok {
		return nil, invalid("lines", "must be an array, got %s", describe(v))
	}
	if len(lines) == 0 || len(lines) > MaxLines {
		return nil, invalid("lines", "must hold 1 to %d lines, got %d", MaxLines, len(lines))
	}
	sum := new(big.Rat)
	o.Lines = make([]Line, 0, len(lines))
	for i, lv := range lines {
		at := fmt.Sprintf("lines[%d]", i)
		m, ok := lv.(map[string]any)
		if !ok {
			return nil, invalid(at, "must be an object, got %s", describe(lv))
		}
		var l Line
		if l.SKU, ok = m["sku"].(string); !ok || strings.TrimSpace(l.SKU) == "" {
			return nil, invalid(at+".sku", "must be a non-empty string, got %s", describe(m["sku"]))
		}
		q, ok := m["quantity"].(json.Number)
		if !ok {
			return nil, invalid(at+".quantity", "must be an integer from 1 to %d, got %s", MaxQuantity, describe(m["quantity"]))
		}
		qr, ok := new(big.Rat).SetString(q.String())
		if !ok || !qr.IsInt() || qr.Sign() < 1 || qr.Cmp(big.NewRat(MaxQuantity, 1)) > 0 {
			return nil, invalid(at+".quantity", "must be an integer from 1 to %d, got %s", MaxQuantity, truncate(q.String(), 40))
		}
		l.Quantity = int(qr.Num().Int64())
		price, ok := m["unitPrice"].(string)
		if !ok {
			return nil, invalid(at+".unitPrice", "must be a decimal string such as \"19.99\" (money is never a JSON number), got %s", describe(m["unitPrice"]))
		}
		p, err := parseMoney(at+".unitPrice", price, maxFractions)
		if err != nil {
			return nil, err
		}
		l.UnitPrice = price
		sum.Add(sum, p.Mul(p, qr))
		o.Lines = append(o.Lines, l)
	}
	return sum, nil
}

// parseMoney parses a non-negative decimal string with at most fractions
// digits after the point (any number when fractions < 0).
func parseMoney(field, s string, fractions int) (*big.Rat, error) {
	if !decimalPattern.MatchString(s) {
		return nil, invalid(field, "must be a decimal string such as \"19.99\", got %q", truncate(s, 40))
	}
	if strings.HasPrefix(s, "-") {
		return nil, invalid(field, "must be at least 0, got %s", s)
	}
	if dot := strings.IndexByte(s, '.'); fractions >= 0 && dot >= 0 && len(s)-dot-1 > fractions {
		return nil, invalid(field, "has more than %d digits after the decimal point: %s", fractions, s)
	}
	r, _ := new(big.Rat).SetString(s)
	return r, nil
}

func formatMoney(r *big.Rat) string {
	s := r.FloatString(maxFractions)
	s = strings.TrimRight(s, "0")
	if strings.HasSuffix(s, ".") {
		s += "00"
	} else if i := strings.IndexByte(s, '.'); i >= 0 && len(s)-i-1 == 1 {
		s += "0"
	}
	return s
}

// requiredString returns a top-level string member.
func (o *Order) requiredString(name string) (string, error) {
	raw, ok := o.fields[name]
	if !ok {
		return "", invalid(name, "is required")
	}
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", malformed("%s: %v", name, err)
		}
		return s, nil
	}
	v, err := decodeValue(raw)
	if err != nil {
		return "", malformed("%s: %v", name, err)
	}
	return "", invalid(name, "must be a string, got %s", describe(v))
}
