package orders_test

import (
	"testing"
	"time"

	. "github.com/ordersink/orders-consumer/orders"
	"github.com/ordersink/orders-consumer/orders/orderstest"
)

// BenchmarkParseOrder: decode, fingerprint and validate one body.
func BenchmarkParseOrder(b *testing.B) {
	body := []byte(orderstest.ExampleBody)
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
	body := []byte(orderstest.ExampleBody)
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
	o, err := ParseOrder([]byte(orderstest.ExampleBody))
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
