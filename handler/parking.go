package handler

import (
	"encoding/base64"
	"time"
	"unicode/utf8"

	"github.com/ordersink/orders-consumer/orders"
)

// ParkingEnvelope is the message written to the parking queue (docs/contract.md §6).
// It is always sent as a JSON object: the host base64-decodes output strings
// that happen to be valid base64.
// Pattern: Parking with a reason (docs/design-patterns.md#parking-with-a-reason).
type ParkingEnvelope struct {
	Reason      orders.Reason `json:"reason"`
	Description string        `json:"description"`
	OrderID     string        `json:"orderId,omitempty"`
	MessageID   string        `json:"messageId"`
	// Subject is the message's Service Bus Subject (its type, such as
	// OrderStatusChanged); a resubmission must send it again.
	Subject       string `json:"subject,omitempty"`
	DeliveryCount int    `json:"deliveryCount"`
	StoredHash    string `json:"storedHash,omitempty"`
	IncomingHash  string `json:"incomingHash,omitempty"`
	// Body is the original message body as text; when it is not valid UTF-8
	// it is base64 and BodyEncoding says so, so no byte is lost. When the
	// envelope would not fit one message with it, Body is empty and BodyRef
	// names the document in the orders container that keeps it.
	Body         string   `json:"body"`
	BodyEncoding string   `json:"bodyEncoding,omitempty"`
	BodyRef      *BodyRef `json:"bodyRef,omitempty"`
	// BodyBytes and BodySHA256 identify the original body in every case.
	BodyBytes    int       `json:"bodyBytes"`
	BodySHA256   string    `json:"bodySha256"`
	EnqueuedAt   string    `json:"enqueuedTimeUtc,omitempty"`
	ParkedAt     time.Time `json:"parkedAt"`
	Function     string    `json:"function"`
	InvocationID string    `json:"invocationId"`
}

// parkedAt is now in the 100 ns ticks of .NET's DateTime: the host rewrites
// an output's dates (docs/host-wire-format.md §9), and a finer time would
// not survive it unchanged.
func parkedAt(now time.Time) time.Time { return now.UTC().Truncate(dotNetTick) }

const dotNetTick = 100 * time.Nanosecond

func (e *ParkingEnvelope) setBody(b []byte) {
	e.BodyBytes, e.BodySHA256 = len(b), orders.BodySHA256(b)
	if utf8.Valid(b) {
		e.Body = string(b)
		return
	}
	e.Body, e.BodyEncoding = base64.StdEncoding.EncodeToString(b), "base64"
}
