package orders

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
)

// RFC 8785 canonicalises I-JSON (RFC 7493) only. Outside it the canonical
// form loses information: numbers become the nearest binary64 and lone
// surrogates become U+FFFD, so two different bodies could share one
// fingerprint and a changed order would pass as a duplicate. Such bodies are
// refused here instead (docs/contract.md §3).

// exactBinary64 reports whether a JSON number survives the trip through an
// IEEE 754 double: read as the nearest binary64 and written back in its
// shortest form (as RFC 8785 does), it is the same decimal number. 0.1,
// 2.0e0 and 1e23 pass; 12345678901234567890, 9007199254740993 and 1e-400 do
// not, since another spelling of another number would canonicalise the same.
func exactBinary64(raw []byte) bool {
	if smallInteger(raw) {
		return true
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil { // out of range: ±Inf
		return false
	}
	want, ok := decimal(string(raw))
	if !ok {
		return false
	}
	got, ok := decimal(strconv.FormatFloat(f, 'e', -1, 64))
	return ok && want == got
}

// smallInteger reports whether raw is an integer of at most 15 digits: below
// 2^53, so a double holds it exactly. Most numbers in orders are; they skip
// the round trip.
func smallInteger(raw []byte) bool {
	raw = bytes.TrimPrefix(raw, []byte("-"))
	if len(raw) == 0 || len(raw) > 15 {
		return false
	}
	for _, c := range raw {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// decimal normalises a JSON number to "digits e exponent" without leading or
// trailing zeros, so equal values spell the same; zero is "0" whatever its
// sign. ok is false for an exponent too large to matter (ParseFloat has then
// made it ±Inf or 0, and the caller refuses it).
func decimal(s string) (norm string, ok bool) {
	sign := ""
	if rest, neg := strings.CutPrefix(s, "-"); neg {
		sign, s = "-", rest
	}
	mant, exp := s, ""
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		mant, exp = s[:i], s[i+1:]
	}
	whole, frac, _ := strings.Cut(mant, ".")
	digits := strings.TrimLeft(whole+frac, "0")
	if digits == "" {
		return "0", true
	}
	e := 0
	if exp != "" {
		var err error
		if e, err = strconv.Atoi(exp); err != nil || e > 1e6 || e < -1e6 {
			return "", false
		}
	}
	e -= len(frac)
	trimmed := strings.TrimRight(digits, "0")
	e += len(digits) - len(trimmed)
	return sign + trimmed + "e" + strconv.Itoa(e), true
}

// breach is the rejection for a broken limit or rule, naming it and where in
// the body it broke.
func (w *walk) breach(rule, format string, args ...any) *RejectError {
	return malformed("body breaks the %s of docs/contract.md §3 at %s: %s",
		rule, where(w.dec.StackPointer()), fmt.Sprintf(format, args...))
}

// syntaxError names the rule a decoding error breaks.
func syntaxError(err error) *RejectError {
	var se *jsontext.SyntacticError
	at := ""
	if errors.As(err, &se) {
		at = where(se.JSONPointer)
	}
	switch {
	case errors.Is(err, jsontext.ErrDuplicateName):
		return malformed("body breaks the duplicate name rule of docs/contract.md §3 at %s: "+
			"an object has the name %q twice; parsers disagree on which one counts", at, truncate(lastToken(se), 40))
	case strings.Contains(err.Error(), "surrogate"):
		return malformed("body breaks the I-JSON string rule of docs/contract.md §3 at %s: "+
			"a string has a lone UTF-16 surrogate escape, which is no character (RFC 7493 §2.1)", at)
	}
	return malformed("body is not valid JSON: %v", err)
}

// lastToken is the last reference token of the error's pointer: for a
// duplicate name, the name.
func lastToken(se *jsontext.SyntacticError) string {
	if se == nil {
		return ""
	}
	return se.JSONPointer.LastToken()
}

// where shows a JSON Pointer (RFC 6901) short enough for a log line; "/" for
// the body itself.
func where(p jsontext.Pointer) string {
	if p == "" {
		return "/"
	}
	return strconv.Quote(truncate(string(p), 80))
}
