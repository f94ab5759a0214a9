package orderstream

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"time"
	"unicode/utf8"

	"github.com/ordersink/orders-consumer/testbed/hostemu"
)

// Record is one line of a stream file: a Service Bus message as a producer
// sends it, and the broker faults to inject for it.
//
// The body is given once: "body" holds a JSON value written on the line as
// the exact body bytes; "bodyText" a body that is not one-line JSON (pretty
// printed, or not JSON at all); "bodyBase64" bytes that are not UTF-8.
type Record struct {
	MessageID             string          `json:"messageId"`
	ContentType           string          `json:"contentType,omitempty"`
	Subject               string          `json:"subject,omitempty"`
	CorrelationID         string          `json:"correlationId,omitempty"`
	ApplicationProperties json.RawMessage `json:"applicationProperties,omitempty"`
	TimeToLive            string          `json:"timeToLive,omitempty"` // Go duration, e.g. "10m"
	Body                  json.RawMessage `json:"body,omitempty"`
	BodyText              *string         `json:"bodyText,omitempty"`
	BodyBase64            string          `json:"bodyBase64,omitempty"`
	// Burst: adjacent records with the same non-zero burst are in flight
	// together. LoseCompletions: successful completions the broker drops.
	Burst           int `json:"burst,omitempty"`
	LoseCompletions int `json:"loseCompletions,omitempty"`
}

// maxLine bounds one stream line (a Service Bus Premium message is 100 MB;
// 16 MB covers anything a test stream holds).
const maxLine = 16 << 20

// Read parses a stream file.
func Read(r io.Reader) ([]*hostemu.Message, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxLine)
	var out []*hostemu.Message
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var rec Record
		if err := json.Unmarshal(line, &rec); err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		m, err := rec.message()
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		out = append(out, m)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

func (rec *Record) message() (*hostemu.Message, error) {
	m := &hostemu.Message{MessageID: rec.MessageID, ContentType: rec.ContentType, Subject: rec.Subject,
		CorrelationID: rec.CorrelationID, ApplicationProperties: rec.ApplicationProperties,
		Burst: rec.Burst, LoseCompletions: rec.LoseCompletions}
	given := 0
	if len(rec.Body) > 0 {
		m.Body, given = rec.Body, given+1
	}
	if rec.BodyText != nil {
		m.Body, given = []byte(*rec.BodyText), given+1
	}
	if rec.BodyBase64 != "" {
		b, err := base64.StdEncoding.DecodeString(rec.BodyBase64)
		if err != nil {
			return nil, fmt.Errorf("bodyBase64: %w", err)
		}
		m.Body, given = b, given+1
	}
	if given != 1 {
		return nil, fmt.Errorf("message %q: give exactly one of body, bodyText, bodyBase64", rec.MessageID)
	}
	if len(rec.ApplicationProperties) > 0 && bytes.TrimSpace(rec.ApplicationProperties)[0] != '{' {
		return nil, fmt.Errorf("message %q: applicationProperties must be an object", rec.MessageID)
	}
	if rec.TimeToLive != "" {
		d, err := time.ParseDuration(rec.TimeToLive)
		if err != nil {
			return nil, fmt.Errorf("message %q: timeToLive: %w", rec.MessageID, err)
		}
		m.TimeToLive = d
	}
	return m, nil
}

// Write writes messages as a stream file, one record a line.
func Write(w io.Writer, msgs []*hostemu.Message) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	for _, m := range msgs {
		rec := Record{MessageID: m.MessageID, ContentType: m.ContentType, Subject: m.Subject,
			CorrelationID: m.CorrelationID, ApplicationProperties: m.ApplicationProperties,
			Burst: m.Burst, LoseCompletions: m.LoseCompletions}
		if m.TimeToLive > 0 {
			rec.TimeToLive = m.TimeToLive.String()
		}
		switch {
		case isCompactJSON(m.Body):
			rec.Body = m.Body
		case utf8.Valid(m.Body):
			text := string(m.Body)
			rec.BodyText = &text
		default:
			rec.BodyBase64 = base64.StdEncoding.EncodeToString(m.Body)
		}
		if err := enc.Encode(&rec); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// isCompactJSON: encoding/json writes a RawMessage compacted, so only a body
// that is compact already survives as "body" byte for byte.
func isCompactJSON(b []byte) bool {
	var c bytes.Buffer
	if len(b) == 0 || json.Compact(&c, b) != nil || string(b) == "null" {
		return false
	}
	return bytes.Equal(c.Bytes(), b)
}
