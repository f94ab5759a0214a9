// Package hostjson writes JSON the way the Azure Functions host does when it
// hands an output object to the Service Bus output binding: the host parses
// the handler's Outputs with Newtonsoft.Json (JToken.Parse defaults) and the
// binding sends each item's ToString(), which is Newtonsoft's indented form.
// On the way, strings that look like ISO 8601 dates are read as dates and
// written back in Newtonsoft's format, and numbers are re-printed as .NET
// prints a long, a BigInteger or a double.
//
// The handler measures its outputs with it (a message must fit the broker as
// sent, not as written), and the test bench's host emulator sends outputs
// with it.
package hostjson

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Newline is what Newtonsoft writes between lines: Environment.NewLine, "\n"
// on the Linux hosts this app runs on (docs/adr/0004-hosting-plan.md).
const Newline = "\n"

// Indent re-serialises one JSON value (an Outputs item) as the host sends it:
// Newtonsoft's Formatting.Indented with two spaces, "name": value, empty
// containers as {} and [], strings escaped by Newtonsoft's default rules.
func Indent(raw []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	w := writer{buf: make([]byte, 0, len(raw)+len(raw)/2)}
	if err := w.value(dec, 0); err != nil {
		return nil, fmt.Errorf("re-serialise output as the host does: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("re-serialise output as the host does: data after the value")
	}
	return w.buf, nil
}

// Size is len(Indent(raw)).
func Size(raw []byte) (int, error) {
	b, err := Indent(raw)
	return len(b), err
}

type writer struct{ buf []byte }

func (w *writer) newline(depth int) {
	w.buf = append(w.buf, Newline...)
	for range depth {
		w.buf = append(w.buf, ' ', ' ')
	}
}

// value writes the next value of dec, whose first token is not read yet.
func (w *writer) value(dec *json.Decoder, depth int) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch t := tok.(type) {
	case json.Delim:
		return w.container(dec, t, depth)
	case string:
		w.buf = appendString(w.buf, t)
	case json.Number:
		w.buf = AppendNumber(w.buf, string(t))
	case bool:
		w.buf = strconv.AppendBool(w.buf, t)
	case nil:
		w.buf = append(w.buf, "null"...)
	}
	return nil
}

// container writes an object or array whose opening token was read.
func (w *writer) container(dec *json.Decoder, open json.Delim, depth int) error {
	closing := byte('}')
	if open == '[' {
		closing = ']'
	}
	w.buf = append(w.buf, byte(open))
	n := 0
	for dec.More() {
		if n > 0 {
			w.buf = append(w.buf, ',')
		}
		n++
		w.newline(depth + 1)
		if open == '{' {
			key, err := dec.Token()
			if err != nil {
				return err
			}
			w.buf = AppendQuote(w.buf, key.(string))
			w.buf = append(w.buf, ':', ' ')
		}
		if err := w.value(dec, depth+1); err != nil {
			return err
		}
	}
	if _, err := dec.Token(); err != nil { // the closing delimiter
		return err
	}
	if n > 0 {
		w.newline(depth)
	}
	w.buf = append(w.buf, closing)
	return nil
}

// appendString writes a string value; one Newtonsoft's reader takes for a
// date is written back as that date.
func appendString(b []byte, s string) []byte {
	if d, ok := parseDate(s); ok {
		return AppendQuote(b, d)
	}
	return AppendQuote(b, s)
}

// AppendQuote appends s as a JSON string literal the way Newtonsoft writes it
// (StringEscapeHandling.Default): ", \, control characters, U+0085, U+2028
// and U+2029 are escaped, everything else, <, > and & included, is written as
// is. Invalid UTF-8 has already become U+FFFD in a .NET string.
func AppendQuote(b []byte, s string) []byte {
	b = append(b, '"')
	for _, r := range s {
		switch r {
		case '"':
			b = append(b, '\\', '"')
		case '\\':
			b = append(b, '\\', '\\')
		case '\b':
			b = append(b, '\\', 'b')
		case '\f':
			b = append(b, '\\', 'f')
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		case '\u0085', '\u2028', '\u2029':
			b = appendUnicodeEscape(b, r)
		default:
			if r < 0x20 {
				b = appendUnicodeEscape(b, r)
			} else {
				b = utf8.AppendRune(b, r)
			}
		}
	}
	return append(b, '"')
}

func appendUnicodeEscape(b []byte, r rune) []byte {
	const hex = "0123456789abcdef" // Newtonsoft writes lower-case hex digits
	return append(b, '\\', 'u', hex[r>>12&0xf], hex[r>>8&0xf], hex[r>>4&0xf], hex[r&0xf])
}

// AppendNumber appends a JSON number as Newtonsoft writes it back: an integer
// (a long or a BigInteger) as its digits, anything with a fraction or an
// exponent as a double, printed by JsonConvert.ToString(double): .NET's
// shortest round-trip form with ".0" added when it has neither a point nor
// an exponent ("19.90" becomes 19.9, "1e5" becomes 100000.0), and a double
// that overflows as the string "Infinity".
func AppendNumber(b []byte, lit string) []byte {
	s, ok := NumberString(lit)
	switch {
	case !ok:
		return append(b, lit...)
	case s == "Infinity" || s == "-Infinity":
		return AppendQuote(b, s)
	case strings.ContainsAny(lit, ".eE") && !strings.ContainsAny(s, ".E"):
		return append(append(b, s...), ".0"...)
	}
	return append(b, s...)
}

// NumberString is the .NET string of a JSON number as Newtonsoft reads it:
// integers (long or BigInteger) print their digits; anything with a fraction
// or an exponent is a double, printed shortest round-trip the way .NET Core
// 3.0+ does ("19.98", "5", "1E+21", "1E-05").
func NumberString(lit string) (string, bool) {
	if !strings.ContainsAny(lit, ".eE") {
		n, ok := new(big.Int).SetString(lit, 10)
		if !ok {
			return "", false
		}
		return n.String(), true
	}
	f, err := strconv.ParseFloat(lit, 64)
	switch {
	case math.IsInf(f, 1):
		return "Infinity", true
	case math.IsInf(f, -1):
		return "-Infinity", true
	case err != nil:
		return "", false
	case f == 0 && math.Signbit(f):
		return "-0", true
	case f == 0:
		return "0", true
	}
	e := strconv.FormatFloat(f, 'e', -1, 64) // d.dddde±XX
	mant, exp, _ := strings.Cut(e, "e")
	x, _ := strconv.Atoi(exp)
	if x > -5 && x < 15 { // the "R" rule: fixed point for -5 < exponent < 15
		return strconv.FormatFloat(f, 'f', -1, 64), true
	}
	sign := "+"
	if x < 0 {
		sign, x = "-", -x
	}
	exps := strconv.Itoa(x)
	if x < 10 {
		exps = "0" + exps
	}
	return mant + "E" + sign + exps, true
}

// parseDate recognises what Newtonsoft's reader takes for a date
// (DateTimeUtils.TryParseDateTimeIso: yyyy-MM-ddTHH:mm:ss, then one to seven
// fraction digits, then nothing, Z or an offset) and returns how it writes it
// back ("yyyy-MM-ddTHH:mm:ss.FFFFFFFK"): trailing fraction zeros dropped,
// a UTC date with Z, an unzoned one without a zone, and one with an offset
// converted to the host's local time, which is UTC on Azure, written +00:00.
func parseDate(s string) (string, bool) {
	const base = "2006-01-02T15:04:05"
	if len(s) < len(base) || len(s) > len(base)+14 || s[10] != 'T' {
		return "", false
	}
	layout, rest := base, s[len(base):]
	if strings.HasPrefix(rest, ".") {
		n := 1
		for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
			n++
		}
		if n == 1 || n > 8 {
			return "", false
		}
		layout += "." + strings.Repeat("0", n-1)
		rest = rest[n:]
	}
	zone := ""
	switch {
	case rest == "":
	case rest == "Z":
		layout, zone = layout+"Z07:00", "Z"
	case len(rest) == 6 && (rest[0] == '+' || rest[0] == '-') && rest[3] == ':':
		layout, zone = layout+"-07:00", "+00:00"
	default:
		return "", false
	}
	t, err := time.Parse(layout, s)
	if err != nil {
		return "", false
	}
	return t.UTC().Format("2006-01-02T15:04:05.9999999") + zone, true
}
