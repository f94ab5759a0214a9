package orderstream

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
)

// Envelope is a parking envelope (docs/contract.md §6) as the checks of the
// test bench read it from the parking output binding.
type Envelope struct {
	Reason        string `json:"reason"`
	Description   string `json:"description"`
	OrderID       string `json:"orderId"`
	DeliveryCount int    `json:"deliveryCount"`
	StoredHash    string `json:"storedHash"`
	IncomingHash  string `json:"incomingHash"`
	Body          string `json:"body"`
	BodyEncoding  string `json:"bodyEncoding"`
	// BodySHA256 identifies the body when it is kept in Cosmos DB (bodyRef)
	// instead of in the envelope.
	BodySHA256 string `json:"bodySha256"`
	// RawBody is the parked message's body: Body, decoded when
	// BodyEncoding is base64.
	RawBody []byte `json:"-"`
}

// ParseEnvelope reads one parking envelope.
func ParseEnvelope(text string) (*Envelope, error) {
	var e Envelope
	if err := json.Unmarshal([]byte(text), &e); err != nil {
		return nil, fmt.Errorf("%v: %.80s", err, text)
	}
	e.RawBody = []byte(e.Body)
	if e.BodyEncoding == "base64" {
		b, err := base64.StdEncoding.DecodeString(e.Body)
		if err != nil {
			return nil, fmt.Errorf("body is not base64: %v", err)
		}
		e.RawBody = b
	}
	return &e, nil
}
