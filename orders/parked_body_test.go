package orders

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// A parked body read back from its documents is the body that was parked:
// one text document, one base64 document, or parts, whatever else shares
// the partition.
func TestJoinParkedBodyInvertsDocuments(t *testing.T) {
	big := bytes.Repeat([]byte(`{"orderId":"ORD-1","pad":"`+strings.Repeat("x", 1000)+`"}`), 2600) // ~2.6 MB: 3 parts
	for _, tc := range []struct {
		name string
		body []byte
	}{
		{"text", []byte(`{"orderId":"ORD-1"}`)},
		{"not UTF-8", []byte("{\"orderId\":\"ORD-1\xff\"}")},
		{"parts", big},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := NewParkedBody(tc.body, "ORD-1", "m1", HashMismatch, time.Now())
			raw, err := p.Documents()
			if err != nil {
				t.Fatal(err)
			}
			docs := []json.RawMessage{json.RawMessage(`{"type":"order","id":"ORD-1"}`)}
			for i := len(raw) - 1; i >= 0; i-- { // a query returns them in any order
				docs = append(docs, raw[i])
			}
			got, err := JoinParkedBody(docs, p.SHA256)
			if err != nil || !bytes.Equal(got, tc.body) {
				t.Fatalf("%d bytes back (%v), want the %d parked", len(got), err, len(tc.body))
			}
			if len(raw) > 1 {
				without0 := []json.RawMessage{}
				for _, d := range raw[1:] {
					without0 = append(without0, d)
				}
				if _, err := JoinParkedBody(without0, p.SHA256); err == nil || !strings.Contains(err.Error(), "part 0") {
					t.Errorf("a missing part: %v", err)
				}
			}
		})
	}
	if _, err := JoinParkedBody(nil, BodySHA256([]byte("x"))); err == nil {
		t.Error("no document: no error")
	}
	tampered := []json.RawMessage{json.RawMessage(`{"type":"parkedBody","body":"y","bodySha256":"` + BodySHA256([]byte("x")) + `"}`)}
	if _, err := JoinParkedBody(tampered, BodySHA256([]byte("x"))); err == nil || !strings.Contains(err.Error(), "hash to") {
		t.Errorf("a body that does not match its digest: %v", err)
	}
}

// BenchmarkParkedBodyDocuments measures storing a body too large for one
// document (~2.6 MB, 3 parts).
func BenchmarkParkedBodyDocuments(b *testing.B) {
	big := bytes.Repeat([]byte(`{"orderId":"ORD-1","pad":"`+strings.Repeat("x", 1000)+`"}`), 2600)
	p := NewParkedBody(big, "ORD-1", "m1", HashMismatch, time.Now())
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.Documents(); err != nil {
			b.Fatal(err)
		}
	}
}
