package orders

import (
	"bytes"
	"encoding/json"
	"fmt"
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

// reserved are top-level names the stored document uses for itself. A body
// that carried one would overwrite bookkeeping (or, for ttl, delete the order
// after a while; for owner, hand the order to another client of the HTTP
// API), so it is rejected instead.
var reserved = map[string]bool{
	"id": true, "type": true, "ttl": true, "requestHash": true, "hashVersion": true,
	"messageId": true, "acceptedAt": true, "owner": true, "submissionId": true,
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
