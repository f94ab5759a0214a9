// Package producer builds the Service Bus message a producer sends to the
// orders queue, with the MessageId rule of docs/contract.md §3: the orderId
// and a short SHA-256 of the body bytes. The queue's duplicate detection then
// drops exact resends inside its window (nothing reaches the consumer, the
// cheap case) and lets a resend with other content through, so the consumer
// parks it as HashMismatch instead of the broker dropping it unseen
// (docs/adr/0010-message-id-from-order-and-body.md, superseding 0006).
package producer

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"

	"github.com/ordersink/orders-consumer/orders"
)

// Subjects a producer sets; any other Subject, or none, is an order
// (docs/message-types.md).
const (
	SubjectOrderPlaced        = "OrderPlaced"
	SubjectOrderStatusChanged = "OrderStatusChanged"
)

// MessageID is the MessageId of contract §3 for a message carrying body for
// orderID: "<orderId>:<16 hex digits of SHA-256 of body>" ([orders.MessageID]).
func MessageID(orderID string, body []byte) string { return orders.MessageID(orderID, body) }

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
