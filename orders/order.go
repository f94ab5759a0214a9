package orders

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"
	"unicode/utf8"
)

// Order is a validated order message (docs/contract.md §3). Every top-level member of
// the body is kept as sent, unknown ones included, so the stored document and
// the fingerprint see exactly what the producer sent.
type Order struct {
	ID         string
	CustomerID string
	Currency   string
	Lines      []Line
	Total      string
	PlacedAt   time.Time

	// Hash is the request fingerprint (docs/contract.md §4) under [HashVersion].
	Hash string

	fields map[string]json.RawMessage
}

// Line is one order line.
type Line struct {
	SKU       string
	Quantity  int
	UnitPrice string
}

// maxDepth bounds JSON nesting. Real orders nest three levels deep; the bound
// keeps hostile bodies from costing deep recursion in every parser they meet.
const maxDepth = 32

// reserved are top-level names the stored document uses for itself. A body
// that carried one would overwrite bookkeeping (or, for ttl, delete the order
// after a while), so it is rejected instead.
var reserved = map[string]bool{
	"id": true, "type": true, "ttl": true, "requestHash": true, "hashVersion": true,
	"messageId": true, "acceptedAt": true,
}

// ParseOrder decodes and validates a message body. The error is a *[RejectError]
// whose Reason is MalformedMessage (not a JSON object) or ValidationFailed (a
// rule of docs/contract.md §3 is broken).
func ParseOrder(body []byte) (*Order, error) {
	fields, err := decodeObject(body)
	if err != nil {
		return nil, err
	}
	o := &Order{fields: fields}
	// Canonicalising first also rejects duplicate keys nested anywhere, which
	// validation alone would not notice.
	if o.Hash, err = fingerprint(fields, HashVersion); err != nil {
		return nil, err
	}
	if err := o.validate(); err != nil {
		return nil, err
	}
	return o, nil
}

// PeekOrderID returns the orderId of a body that may be invalid, for the
// parking envelope and logs; "" when there is none.
func PeekOrderID(body []byte) string {
	var v struct {
		OrderID any `json:"orderId"`
	}
	if json.Unmarshal(body, &v) != nil {
		return ""
	}
	s, _ := v.OrderID.(string)
	return s
}

// decodeObject reads a JSON object into its members, refusing what other
// parsers would read differently: invalid UTF-8, duplicate keys, trailing data
// and excessive nesting.
func decodeObject(body []byte) (map[string]json.RawMessage, error) {
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return nil, malformed("body is empty")
	}
	if !utf8.Valid(body) {
		return nil, malformed("body is not valid UTF-8")
	}
	if d := depth(body); d > maxDepth {
		return nil, malformed("body nests deeper than %d levels", maxDepth)
	}
	if body[0] != '{' {
		if !json.Valid(body) {
			return nil, malformed("body is not valid JSON")
		}
		return nil, malformed("body is JSON but not an object: an order is a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if _, err := dec.Token(); err != nil {
		return nil, malformed("body is not valid JSON: %v", err)
	}
	fields := make(map[string]json.RawMessage, 8)
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, malformed("body is not valid JSON: %v", err)
		}
		key := tok.(string) // inside an object the decoder only yields string keys
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, malformed("body is not valid JSON: %v", err)
		}
		if _, dup := fields[key]; dup {
			return nil, malformed("body has the key %q twice; parsers disagree on which one counts", key)
		}
		fields[key] = raw
	}
	if _, err := dec.Token(); err != nil {
		return nil, malformed("body is not valid JSON: %v", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, malformed("body has data after the JSON object")
	}
	return fields, nil
}

// depth returns the deepest nesting of objects and arrays in a JSON text,
// ignoring brackets inside strings.
func depth(b []byte) int {
	d, maxD, inString, escaped := 0, 0, false, false
	for _, c := range b {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			d++
			maxD = max(maxD, d)
		case c == '}' || c == ']':
			d--
		}
	}
	return maxD
}

// decodeValue decodes one raw JSON value keeping numbers as written.
func decodeValue(raw json.RawMessage) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

// describe names the JSON type of a decoded value for error messages.
func describe(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return fmt.Sprintf("string %q", truncate(x, 40))
	case json.Number:
		return "JSON number " + truncate(x.String(), 40)
	case bool:
		return fmt.Sprintf("boolean %t", x)
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n]) + "…"
}
