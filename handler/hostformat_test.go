package handler

import "github.com/ordersink/orders-consumer/handler/handlertest"

// hostInvocation encodes one Service Bus message the way the Functions host
// does for ProcessOrder as deployed (handlertest.Invocation).
func hostInvocation(body []byte, messageID string, deliveryCount int) []byte {
	return handlertest.Invocation(TriggerBinding, body, messageID, deliveryCount)
}

// hostStringInvocation encodes a message for a string-typed trigger
// (handlertest.StringInvocation).
func hostStringInvocation(body []byte, messageID string, deliveryCount int) []byte {
	return handlertest.StringInvocation(TriggerBinding, body, messageID, deliveryCount)
}
