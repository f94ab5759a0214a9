package orders

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"
	"unicode/utf8"
)

// TypeParkedBody marks the body of a parked message whose parking envelope
// could not carry it within the broker's message size limit (docs/contract.md §6).
const TypeParkedBody = "parkedBody"

// ParkedBodyTTL is the Cosmos DB ttl of a parked body's documents: -1, never
// expire, whatever the container's defaultTtl. Envelopes never expire either
// (the parking queue keeps the broker's unlimited time to live, and its
// dead-letter queue keeps what it holds until someone takes it), so a body
// must outlive every envelope that points at it; it is deleted when its
// envelope is settled (docs/adr/0013-parked-messages-never-expire.md).
// tools/bicepcheck reads this constant against the parking queue's Bicep.
const ParkedBodyTTL = -1

// Parked bodies are stored as text in one document when that fits well
// inside Cosmos DB's 2 MB per document; a larger body (a Premium namespace
// takes messages up to 100 MB) is split into parts of partBytes, each stored
// as base64, whose size does not depend on how much of the text JSON must
// escape.
const (
	maxTextDocument = 1536 << 10
	partBytes       = 1 << 20
)

// ParkedBody is a parked message's body kept in the orders container. It is
// content-addressed: the same body parked again (a redelivery) is the same
// document, so writing it twice is harmless.
type ParkedBody struct {
	// PartitionKey is the orderId when the body names a usable one, so the
	// body sits beside the order; otherwise a key of its own.
	PartitionKey string
	Body         []byte
	SHA256       string // BodySHA256 of Body
	MessageID    string // the first message parked with this body
	Reason       Reason
	ParkedAt     time.Time
}

// NewParkedBody describes body for keeping; orderID may be empty or unusable.
func NewParkedBody(body []byte, orderID, messageID string, reason Reason, parkedAt time.Time) ParkedBody {
	p := ParkedBody{PartitionKey: orderID, Body: body, SHA256: BodySHA256(body), MessageID: messageID, Reason: reason, ParkedAt: parkedAt}
	if CheckOrderID(orderID) != nil {
		p.PartitionKey = "parked-body:" + p.SHA256[len("sha256:"):]
	}
	return p
}

// BodySHA256 is the digest a parking envelope gives of a body:
// "sha256:" + lower-case hex, the form requestHash uses.
func BodySHA256(body []byte) string {
	sum := sha256.Sum256(body)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// ID is the id of the body's (first) document: derived from the digest, so
// it is a valid Cosmos id whatever the body holds. Part i > 0 is ID():i.
func (p ParkedBody) ID() string { return "parkedBody:" + p.SHA256[len("sha256:"):] }

// Documents returns the stored form: one document holding the body, or, for
// a body too large for one, its parts in order. Each carries the digest and
// size of the whole body; parts say which part of how many they are.
func (p ParkedBody) Documents() ([][]byte, error) {
	// Encoding only grows a body (JSON escapes, base64), so one longer than
	// a document's budget is split without encoding it whole first.
	if len(p.Body) <= maxTextDocument {
		one, err := p.document(p.ID(), p.Body, !utf8.Valid(p.Body), 0, 1)
		if err != nil || len(one) <= maxTextDocument {
			return [][]byte{one}, err
		}
	}
	n := (len(p.Body) + partBytes - 1) / partBytes
	docs := make([][]byte, 0, n)
	for i := range n {
		id := p.ID()
		if i > 0 {
			id = fmt.Sprintf("%s:%d", id, i)
		}
		doc, err := p.document(id, p.Body[i*partBytes:min(len(p.Body), (i+1)*partBytes)], true, i, n)
		if err != nil {
			return nil, err
		}
		docs = append(docs, doc)
	}
	return docs, nil
}

func (p ParkedBody) document(id string, body []byte, asBase64 bool, part, parts int) ([]byte, error) {
	doc := map[string]any{
		"id":         id,
		"orderId":    p.PartitionKey,
		"type":       TypeParkedBody,
		"body":       string(body),
		"bodyBytes":  len(p.Body),
		"bodySha256": p.SHA256,
		"messageId":  p.MessageID,
		"reason":     p.Reason,
		"parkedAt":   p.ParkedAt.UTC().Format(time.RFC3339Nano),
		"ttl":        ParkedBodyTTL,
	}
	if asBase64 {
		doc["body"], doc["bodyEncoding"] = base64.StdEncoding.EncodeToString(body), "base64"
	}
	if parts > 1 {
		doc["part"], doc["parts"] = part, parts
	}
	b, err := json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("encode parked body %s: %w", id, err)
	}
	return b, nil
}

// JoinParkedBody rebuilds a parked body from the documents of its partition
// (any documents: those of another type or digest are passed over): the one
// document, or its parts in order, decoded and checked against digest, the
// envelope's bodySha256. It is the inverse of [ParkedBody.Documents].
func JoinParkedBody(docs []json.RawMessage, digest string) ([]byte, error) {
	type stored struct {
		Type         string `json:"type"`
		Body         string `json:"body"`
		BodyEncoding string `json:"bodyEncoding"`
		BodySHA256   string `json:"bodySha256"`
		Part         int    `json:"part"`
		Parts        int    `json:"parts"`
	}
	var parts []stored
	for _, raw := range docs {
		var d stored
		if json.Unmarshal(raw, &d) != nil || d.Type != TypeParkedBody || d.BodySHA256 != digest {
			continue
		}
		parts = append(parts, d)
	}
	if len(parts) == 0 {
		return nil, fmt.Errorf("parked body %s: no document (deleted when its envelope was settled, or never written)", digest)
	}
	want := max(parts[0].Parts, 1)
	ordered := make([]*stored, want)
	for i := range parts {
		p := &parts[i]
		if max(p.Parts, 1) != want || p.Part < 0 || p.Part >= want || ordered[p.Part] != nil {
			return nil, fmt.Errorf("parked body %s: parts do not fit together", digest)
		}
		ordered[p.Part] = p
	}
	var body []byte
	for i, p := range ordered {
		if p == nil {
			return nil, fmt.Errorf("parked body %s: part %d of %d is missing", digest, i, want)
		}
		chunk := []byte(p.Body)
		if p.BodyEncoding == "base64" {
			var err error
			if chunk, err = base64.StdEncoding.DecodeString(p.Body); err != nil {
				return nil, fmt.Errorf("parked body %s part %d: %w", digest, i, err)
			}
		}
		body = append(body, chunk...)
	}
	if got := BodySHA256(body); got != digest {
		return nil, fmt.Errorf("parked body %s: the stored parts hash to %s", digest, got)
	}
	return body, nil
}
