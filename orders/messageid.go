package orders

import (
	"crypto/sha256"
	"encoding/hex"
	"unicode/utf8"
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

// MessageID is the MessageId producers set (contract §3) for a message
// carrying body for orderID:
// "<orderId>:<16 hex digits of SHA-256 of body>", at most 114 characters; an
// orderId longer than 96 characters becomes its first 80, "~" and 16 hex digits
// of its own SHA-256. Equal bytes give equal ids; a change to any byte, meta
// included, gives another id, which the consumer then judges by fingerprint.
// Pattern: Broker duplicate detection (docs/design-patterns.md#broker-duplicate-detection).
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
