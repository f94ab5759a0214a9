package localqueue

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A body survives a line byte for byte, in the field its bytes call for.
func TestRecordBodyRoundTrip(t *testing.T) {
	for _, c := range []struct {
		name, field string
		body        []byte
	}{
		{"compact JSON", `"body"`, []byte(`{"orderId":"ORD-1"}`)},
		{"indented JSON", `"bodyText"`, []byte("{\n  \"orderId\": \"ORD-1\"\n}")},
		{"not JSON", `"bodyText"`, []byte("<order/>")},
		{"not UTF-8", `"bodyBase64"`, []byte{0xff, 0xfe, 'x'}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var rec Record
			rec.SetBody(c.body)
			line, err := json.Marshal(&rec)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Contains(line, []byte(c.field)) {
				t.Errorf("line %s; want the body in %s", line, c.field)
			}
			var back Record
			if err := json.Unmarshal(line, &back); err != nil {
				t.Fatal(err)
			}
			got, err := back.DecodeBody()
			if err != nil || !bytes.Equal(got, c.body) {
				t.Fatalf("body %q (%v); want %q", got, err, c.body)
			}
		})
	}
}

func TestRecordBodyGivenOnce(t *testing.T) {
	text := "x"
	for _, rec := range []Record{{MessageID: "m"}, {MessageID: "m", Body: json.RawMessage(`{}`), BodyText: &text}} {
		if _, err := rec.DecodeBody(); err == nil || !strings.Contains(err.Error(), "exactly one") {
			t.Errorf("%+v: %v; want the exactly-one error", rec, err)
		}
	}
}

func TestDeadLetterBodyRoundTrip(t *testing.T) {
	for _, body := range [][]byte{[]byte(`{"orderId":"ORD-1"}`), {0xff, 0x00}} {
		var d DeadLetter
		d.SetBody(body)
		if got, err := d.DecodeBody(); err != nil || !bytes.Equal(got, body) {
			t.Errorf("body %q (%v); want %q", got, err, body)
		}
	}
}

// A missing file is an empty queue; blank lines are skipped; the last
// sequence number is the highest, not the last line's.
func TestReadLinesAndLastSequence(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, OutputFile("parked-orders"))
	if lines, err := ReadLines(missing); err != nil || lines != nil {
		t.Fatalf("missing file: %q, %v; want none", lines, err)
	}
	if last, err := LastSequence(missing); err != nil || last != 0 {
		t.Fatalf("missing file: last %d, %v; want 0", last, err)
	}
	path := filepath.Join(dir, DeadLetterFile("orders"))
	if err := os.WriteFile(path, []byte("{\"sequenceNumber\":3}\n\n{\"sequenceNumber\":7}\n{\"sequenceNumber\":5}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	lines, err := ReadLines(path)
	if err != nil || len(lines) != 3 {
		t.Fatalf("%d lines, %v; want 3", len(lines), err)
	}
	if last, err := LastSequence(path); err != nil || last != 7 {
		t.Fatalf("last %d, %v; want 7", last, err)
	}
}

func TestAppendRecord(t *testing.T) {
	path := filepath.Join(t.TempDir(), "send.jsonl")
	for _, id := range []string{"a", "b"} {
		rec := &Record{MessageID: id}
		rec.SetBody([]byte(`{"orderId":"` + id + `"}`))
		if err := AppendRecord(path, rec); err != nil {
			t.Fatal(err)
		}
	}
	lines, err := ReadLines(path)
	if err != nil || len(lines) != 2 {
		t.Fatalf("%d lines, %v; want 2", len(lines), err)
	}
	var rec Record
	if err := json.Unmarshal(lines[1], &rec); err != nil || rec.MessageID != "b" {
		t.Fatalf("second line %s (%v); want message b", lines[1], err)
	}
}
