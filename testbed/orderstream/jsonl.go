package orderstream

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/ordersink/orders-consumer/internal/localqueue"
	"github.com/ordersink/orders-consumer/testbed/hostemu"
)

// Record is one line of a stream file; localqueue defines the format.
type Record = localqueue.Record

// Read parses a stream file.
func Read(r io.Reader) ([]*hostemu.Message, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), localqueue.MaxLine)
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
		m, err := message(&rec)
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

func message(rec *Record) (*hostemu.Message, error) {
	m := &hostemu.Message{MessageID: rec.MessageID, ContentType: rec.ContentType, Subject: rec.Subject,
		CorrelationID: rec.CorrelationID, ApplicationProperties: rec.ApplicationProperties,
		Burst: rec.Burst, LoseCompletions: rec.LoseCompletions}
	body, err := rec.DecodeBody()
	if err != nil {
		return nil, err
	}
	m.Body = body
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
		rec.SetBody(m.Body)
		if err := enc.Encode(&rec); err != nil {
			return err
		}
	}
	return bw.Flush()
}
