// Package localqueue defines the files that stand for Service Bus queues on
// a developer's machine, for the host emulator's driver (testbed/localrun),
// the stream generator (testbed/orderstream) and ordersctl's local mode:
//
//   - a stream file holds messages to deliver, one [Record] a line: the
//     orders queue (hostemu -stream reads it; ordersctl resubmit and send
//     append to it);
//   - <entity>.jsonl ([OutputFile]) holds what an output binding sent to a
//     queue or topic, one [Sent] a line: the parking queue among them;
//   - <queue>.deadletter.jsonl ([DeadLetterFile]) holds the broker's dead
//     letters of a queue, one [DeadLetter] a line.
//
// The output and dead-letter lines carry a sequenceNumber, as the broker
// numbers a queue's messages, so ordersctl can name one.
package localqueue

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"unicode/utf8"
)

// MaxLine bounds one line of any of the files (a Service Bus Premium
// message is 100 MB; 16 MB covers an envelope of a 256 KB body, escaped,
// and anything a test stream holds).
const MaxLine = 16 << 20

// OutputFile is the name of the file of what output bindings sent to entity.
func OutputFile(entity string) string { return entity + ".jsonl" }

// DeadLetterFile is the name of the file of queue's dead letters.
func DeadLetterFile(queue string) string { return queue + ".deadletter.jsonl" }

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

// SetBody stores b in the one field that keeps its bytes exactly.
func (r *Record) SetBody(b []byte) {
	r.Body, r.BodyText, r.BodyBase64 = nil, nil, ""
	switch {
	case isCompactJSON(b):
		r.Body = b
	case utf8.Valid(b):
		text := string(b)
		r.BodyText = &text
	default:
		r.BodyBase64 = base64.StdEncoding.EncodeToString(b)
	}
}

// DecodeBody returns the record's body bytes, checking that exactly one of
// body, bodyText and bodyBase64 is given.
func (r *Record) DecodeBody() ([]byte, error) {
	var body []byte
	given := 0
	if len(r.Body) > 0 {
		body, given = r.Body, given+1
	}
	if r.BodyText != nil {
		body, given = []byte(*r.BodyText), given+1
	}
	if r.BodyBase64 != "" {
		b, err := base64.StdEncoding.DecodeString(r.BodyBase64)
		if err != nil {
			return nil, fmt.Errorf("bodyBase64: %w", err)
		}
		body, given = b, given+1
	}
	if given != 1 {
		return nil, fmt.Errorf("message %q: give exactly one of body, bodyText, bodyBase64", r.MessageID)
	}
	return body, nil
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

// Sent is one line of an output entity's file: a message an output binding
// sent. SequenceNumber numbers the file's messages from 1 as the broker
// numbers a queue's.
type Sent struct {
	SequenceNumber int64    `json:"sequenceNumber"`
	Entity         string   `json:"entity"`
	Function       string   `json:"function"`
	InvocationID   string   `json:"invocationId"`
	MessageIDs     []string `json:"triggerMessageIds"`
	ContentType    string   `json:"contentType"`
	// Body is the message's text (for the parking queue, the envelope).
	Body       string `json:"body"`
	Base64Trap bool   `json:"base64Trap,omitempty"`
}

// DeadLetter is one line of a dead-letter file: the message the broker
// moved there and why.
type DeadLetter struct {
	// SequenceNumber numbers the file's lines from 1.
	SequenceNumber int64  `json:"sequenceNumber"`
	MessageID      string `json:"messageId"`
	DeliveryCount  int    `json:"deliveryCount"`
	Reason         string `json:"deadLetterReason"`
	Description    string `json:"deadLetterErrorDescription"`
	Subject        string `json:"subject,omitempty"`
	Body           string `json:"body,omitempty"`
	BodyBase64     string `json:"bodyBase64,omitempty"`
}

// SetBody stores b as text when it is UTF-8, else in base64.
func (d *DeadLetter) SetBody(b []byte) {
	if utf8.Valid(b) {
		d.Body, d.BodyBase64 = string(b), ""
	} else {
		d.Body, d.BodyBase64 = "", base64.StdEncoding.EncodeToString(b)
	}
}

// DecodeBody returns the dead letter's body bytes.
func (d *DeadLetter) DecodeBody() ([]byte, error) {
	if d.BodyBase64 == "" {
		return []byte(d.Body), nil
	}
	b, err := base64.StdEncoding.DecodeString(d.BodyBase64)
	if err != nil {
		return nil, fmt.Errorf("bodyBase64: %w", err)
	}
	return b, nil
}

// NewScanner returns a scanner of a file's lines that takes lines up to
// MaxLine.
func NewScanner(f *os.File) *bufio.Scanner {
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), MaxLine)
	return sc
}

// ReadLines returns a file's non-blank lines; a file that does not exist is
// an empty queue.
func ReadLines(path string) ([][]byte, error) {
	file, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer file.Close()
	var out [][]byte
	sc := NewScanner(file)
	for sc.Scan() {
		if len(bytes.TrimSpace(sc.Bytes())) > 0 {
			out = append(out, bytes.Clone(sc.Bytes()))
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return out, nil
}

// LastSequence is the highest sequenceNumber in a file (0 when there is
// none, or no file), so lines appended after ordersctl removed some keep
// their numbers unique in the file.
func LastSequence(path string) (int64, error) {
	lines, err := ReadLines(path)
	if err != nil {
		return 0, err
	}
	var last int64
	for _, b := range lines {
		var line struct {
			SequenceNumber int64 `json:"sequenceNumber"`
		}
		if json.Unmarshal(b, &line) == nil {
			last = max(last, line.SequenceNumber)
		}
	}
	return last, nil
}

// AppendRecord appends rec as a line of the stream file at path.
func AppendRecord(path string, rec *Record) error {
	line, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(append(line, '\n')); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
