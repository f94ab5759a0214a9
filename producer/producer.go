// Package producer builds the Service Bus message a producer sends to the
// orders queue, with the MessageId rule of docs/contract.md §3: the orderId
// and a short SHA-256 of the body bytes. The queue's duplicate detection then
// drops exact resends inside its window (nothing reaches the consumer, the
// cheap case) and lets a resend with other content through, so the consumer
// parks it as HashMismatch instead of the broker dropping it unseen
// (docs/adr/0009-message-id-from-order-and-body.md, superseding 0006).
package producer

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"
)

// Subjects a producer sets; any other Subject, or none, is an order
// (docs/message-types.md).
const (
	SubjectOrderPlaced        = "OrderPlaced"
	SubjectOrderStatusChanged = "OrderStatusChanged"
)

const (
	// MaxMessageIDLength is Service Bus's limit on a MessageId, in characters.
	MaxMessageIDLength = 128
	// keptOrderIDRunes is the longest orderId kept whole in a MessageId.
	// A longer one (orderIds may have 255 characters) is cut to
	// cutOrderIDRunes and tagged with its own hash, which makes the cut form
	// 97 characters long: never equal to a kept orderId of 96 or fewer.
	keptOrderIDRunes = 96
	cutOrderIDRunes  = 80
	// hashHexDigits is 64 bits of SHA-256: two different bodies of one order
	// share a MessageId with odds of 2^-64, and then the broker drops the
	// second as ADR 0006 describes, no worse than before.
	hashHexDigits = 16
)

// MessageID is the MessageId for a message carrying body for orderID:
// "<orderId>:<16 hex digits of SHA-256 of body>", at most 113 characters; an
// orderId longer than 96 characters becomes its first 80, "~" and 16 hex digits
// of its own SHA-256. Equal bytes give equal ids; a change to any byte, meta
// included, gives another id, which the consumer then judges by fingerprint.
func MessageID(orderID string, body []byte) string {
	return orderPart(orderID) + ":" + shortHash(body)
}

func orderPart(orderID string) string {
	if utf8.RuneCountInString(orderID) <= keptOrderIDRunes {
		return orderID
	}
	runes := []rune(orderID)
	return string(runes[:cutOrderIDRunes]) + "~" + shortHash([]byte(orderID))
}

func shortHash(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])[:hashHexDigits]
}

// ErrNoOrderID is returned for a body without a string orderId member.
var ErrNoOrderID = errors.New("body has no string orderId")

// OrderMessage is the message for an order body (docs/contract.md §3), sent
// as is: the body is not re-encoded, so its MessageId and the consumer's
// fingerprint see the bytes the caller has.
func OrderMessage(body []byte) (*azservicebus.Message, error) {
	return message(body, SubjectOrderPlaced)
}

// StatusMessage is the message for an OrderStatusChanged body
// (docs/message-types.md); the Subject is what tells the consumer its type.
func StatusMessage(body []byte) (*azservicebus.Message, error) {
	return message(body, SubjectOrderStatusChanged)
}

func message(body []byte, subject string) (*azservicebus.Message, error) {
	var head struct {
		OrderID *string `json:"orderId"`
	}
	if err := json.Unmarshal(body, &head); err != nil {
		return nil, fmt.Errorf("build %s message: %w", subject, err)
	}
	if head.OrderID == nil || *head.OrderID == "" {
		return nil, fmt.Errorf("build %s message: %w", subject, ErrNoOrderID)
	}
	return &azservicebus.Message{
		Body:        body,
		MessageID:   to.Ptr(MessageID(*head.OrderID, body)),
		ContentType: to.Ptr("application/json"),
		Subject:     to.Ptr(subject),
	}, nil
}
