package orders

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"time"
	"unicode/utf8"
)

// Document types stored in the orders container, one logical partition per
// orderId.
const (
	TypeOrder    = "order"
	TypeConflict = "conflict"
)

// ConflictTTL is how long a conflict record is kept, in seconds (90 days):
// long enough for an operator to investigate, short enough not to grow for
// ever. The container must have TTL enabled (defaultTtl -1) for it to apply.
const ConflictTTL = 90 * 24 * 3600

// Acceptance is what the consumer adds to an order when it accepts it.
type Acceptance struct {
	MessageID  string
	AcceptedAt time.Time
	// Submission is set for an order submitted through the HTTP API: who
	// owns it, and which request created it. Zero for the queue path.
	Submission Submission
}

// instantLayout writes an instant in RFC 3339 at one width, all nine
// fraction digits kept: time.RFC3339Nano drops trailing zeros, so its
// length, and with it the size of an OrderAccepted event, would depend on
// the instant, and an order at the event's size budget would be refused or
// accepted by the clock (docs/contract.md §3, event size). Nine digits are
// also more than the Functions host reads as a date, so it sends the
// instant as written rather than re-printed.
const instantLayout = "2006-01-02T15:04:05.000000000Z07:00"

// FormatInstant writes t as acceptedAt is stored and published: UTC, RFC
// 3339, nine fraction digits.
func FormatInstant(t time.Time) string { return t.UTC().Format(instantLayout) }

// Document is the stored order (docs/contract.md §5): every member of the message as
// sent, plus id, type, requestHash, hashVersion, messageId and acceptedAt,
// and for an order of the HTTP API its owner and submissionId.
func (o *Order) Document(a Acceptance) ([]byte, error) {
	extra := map[string]any{
		"id":          o.ID,
		"type":        TypeOrder,
		"requestHash": o.Hash,
		"hashVersion": HashVersion,
		"messageId":   a.MessageID,
		"acceptedAt":  FormatInstant(a.AcceptedAt),
	}
	if s := a.Submission; s.Owner != "" {
		extra["owner"], extra["submissionId"] = s.Owner, s.ID
	}
	return mergeObject(o.fields, extra)
}

// Conflict is the record of an orderId reused for other content. It lives in
// the order's partition beside the order, which it never touches.
type Conflict struct {
	OrderID      string
	MessageID    string
	StoredHash   string
	IncomingHash string
	Body         string
	DetectedAt   time.Time
}

// ID is deterministic per incoming content, so redeliveries of the same
// mismatching message add one record, not one per delivery.
func (c Conflict) ID() string {
	h := c.IncomingHash
	if len(h) > len("sha256:")+16 {
		h = h[len("sha256:") : len("sha256:")+16]
	}
	return c.OrderID + ":conflict:" + h
}

// Document is the stored conflict record.
func (c Conflict) Document() ([]byte, error) {
	return json.Marshal(map[string]any{
		"id":           c.ID(),
		"orderId":      c.OrderID,
		"type":         TypeConflict,
		"messageId":    c.MessageID,
		"storedHash":   c.StoredHash,
		"incomingHash": c.IncomingHash,
		"body":         c.Body,
		"detectedAt":   c.DetectedAt.UTC().Format(time.RFC3339Nano),
		"ttl":          ConflictTTL,
	})
}

// mergeObject writes one JSON object from raw members and extra members; extra
// names win (validation already refused bodies that carry them).
func mergeObject(raw map[string]json.RawMessage, extra map[string]any) ([]byte, error) {
	names := make([]string, 0, len(raw)+len(extra))
	for k := range raw {
		if _, ok := extra[k]; !ok {
			names = append(names, k)
		}
	}
	for k := range extra {
		names = append(names, k)
	}
	sort.Strings(names)
	var b bytes.Buffer
	b.Grow(512)
	b.WriteByte('{')
	for i, k := range names {
		if i > 0 {
			b.WriteByte(',')
		}
		appendString(&b, k)
		b.WriteByte(':')
		v, ok := extra[k]
		if !ok {
			b.Write(raw[k])
			continue
		}
		if str, isString := v.(string); isString {
			appendString(&b, str)
			continue
		}
		enc, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("encode %s: %w", k, err)
		}
		b.Write(enc)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// appendString writes s as encoding/json does. Member names and the
// consumer's own values (ids, hashes, times) are nearly always plain ASCII,
// which needs no escaping; anything else goes through encoding/json, so the
// bytes never differ from its output.
func appendString(b *bytes.Buffer, s string) {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= utf8.RuneSelf || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			enc, _ := json.Marshal(s) // a string always encodes
			b.Write(enc)
			return
		}
	}
	b.WriteByte('"')
	b.WriteString(s)
	b.WriteByte('"')
}
