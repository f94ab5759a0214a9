package orders

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// storedPart is what TestParkedBodyDocuments reads of a parked body's
// document.
type storedPart struct {
	ID           string `json:"id"`
	OrderID      string `json:"orderId"`
	BodyEncoding string `json:"bodyEncoding"`
	Part         *int   `json:"part"`
	Parts        *int   `json:"parts"`
}

// TestParkedBodyDocuments: the stored form of a parked body. A body that fits
// one document as text is one text document; one whose escapes would make
// that document too large is one base64 document; a larger one is split into
// parts of partBytes, numbered from 0, ids ID(), ID():1…, each saying which
// part of how many it is. The partition is the orderId when it is usable.
func TestParkedBodyDocuments(t *testing.T) {
	for _, tc := range []struct {
		name     string
		body     []byte
		orderID  string
		parts    int
		encoding string
	}{
		{"small text", []byte(`{"orderId":"ORD-1"}`), "ORD-1", 1, ""},
		{"no usable orderId", []byte(`{"note":"x"}`), "", 1, ""},
		{"escapes past a document", bytes.Repeat([]byte(`"`), partBytes), "ORD-1", 1, "base64"},
		{"exactly two parts", bytes.Repeat([]byte("a"), 2*partBytes), "ORD-1", 2, "base64"},
		{"three parts, the last short", bytes.Repeat([]byte("a"), 2*partBytes+1), "ORD-1", 3, "base64"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := NewParkedBody(tc.body, tc.orderID, "m1", HashMismatch, time.Now())
			raw, err := p.Documents()
			if err != nil || len(raw) != tc.parts {
				t.Fatalf("%d documents, %v; want %d", len(raw), err, tc.parts)
			}
			wantPartition := tc.orderID
			if tc.orderID == "" {
				wantPartition = "parked-body:" + strings.TrimPrefix(p.SHA256, "sha256:")
			}
			for i, b := range raw {
				var d storedPart
				if err := json.Unmarshal(b, &d); err != nil {
					t.Fatal(err)
				}
				wantID := p.ID()
				if i > 0 {
					wantID = fmt.Sprintf("%s:%d", p.ID(), i)
				}
				if d.ID != wantID || d.OrderID != wantPartition || d.BodyEncoding != tc.encoding || len(b) > maxTextDocument {
					t.Errorf("document %d: id %s, partition %s, encoding %q, %d bytes; want %s, %s, %q, at most %d",
						i, d.ID, d.OrderID, d.BodyEncoding, len(b), wantID, wantPartition, tc.encoding, maxTextDocument)
				}
				if single := tc.parts == 1; single != (d.Part == nil && d.Parts == nil) ||
					!single && (d.Part == nil || *d.Part != i || d.Parts == nil || *d.Parts != tc.parts) {
					t.Errorf("document %d: part %v of %v; want part numbers only when there are parts", i, d.Part, d.Parts)
				}
			}
		})
	}
}

// TestJoinParkedBodyRefusesAPartPastTheCount: a part numbered at or past
// the count it gives is refused, not indexed.
func TestJoinParkedBodyRefusesAPartPastTheCount(t *testing.T) {
	doc := func(part int) json.RawMessage {
		return json.RawMessage(fmt.Sprintf(`{"type":%q,"body":"x","bodySha256":"sha256:d","part":%d,"parts":2}`, TypeParkedBody, part))
	}
	if _, err := JoinParkedBody([]json.RawMessage{doc(0), doc(2)}, "sha256:d"); err == nil || !strings.Contains(err.Error(), "do not fit") {
		t.Errorf("parts 0 and 2 of 2: %v; want them refused", err)
	}
}
