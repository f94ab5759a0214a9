package orders

import (
	"testing"
	"time"
)

// benchBody is the contract's example order, compact, as producers send it.
const benchBody = `{"orderId":"ORD-2026-000123","customerId":"CUST-42","currency":"EUR","lines":[{"sku":"SKU-1","quantity":2,"unitPrice":"19.99"},{"sku":"SKU-7","quantity":1,"unitPrice":"5.00"}],"total":"44.98","placedAt":"2026-11-29T10:00:00Z","meta":{"sentAt":"2026-11-29T10:00:01.123Z","producer":"web-shop"}}`

// BenchmarkParseOrder: decode, fingerprint and validate one body.
func BenchmarkParseOrder(b *testing.B) {
	body := []byte(benchBody)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseOrder(body); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFingerprint: the fingerprint alone (decode, JCS, SHA-256).
func BenchmarkFingerprint(b *testing.B) {
	body := []byte(benchBody)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Fingerprint(body, HashVersion); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAcceptanceDocuments: the order document and its outbox event
// built from a parsed order.
func BenchmarkAcceptanceDocuments(b *testing.B) {
	o, err := ParseOrder([]byte(benchBody))
	if err != nil {
		b.Fatal(err)
	}
	a := Acceptance{MessageID: o.ID, AcceptedAt: time.Date(2026, 11, 29, 10, 0, 2, 0, time.UTC)}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := o.AcceptanceDocuments(a); err != nil {
			b.Fatal(err)
		}
	}
}
