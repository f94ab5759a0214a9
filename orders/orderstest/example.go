package orderstest

import (
	"bytes"
	"strings"
	"sync"
)

// ExampleOrderID is the orderId of [ExampleBody].
const ExampleOrderID = "ORD-2026-000123"

// ExampleBody is the order message of docs/contract.md §3, compact, as a
// producer sends it.
const ExampleBody = `{"orderId":"ORD-2026-000123","customerId":"CUST-42","currency":"EUR",` +
	`"lines":[{"sku":"SKU-1","quantity":2,"unitPrice":"19.99"},{"sku":"SKU-7","quantity":1,"unitPrice":"5.00"}],` +
	`"total":"44.98","placedAt":"2026-11-29T10:00:00Z","meta":{"sentAt":"2026-11-29T10:00:01.123Z","producer":"web-shop"}}`

// ExampleBodyWithID is [ExampleBody] under another orderId, so tests that
// share one database do not meet.
func ExampleBodyWithID(orderID string) []byte {
	return []byte(strings.Replace(ExampleBody, ExampleOrderID, orderID, 1))
}

// Buffer is a bytes.Buffer safe for concurrent writers: the log of a handler
// serving concurrent invocations in a test.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *Buffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *Buffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
