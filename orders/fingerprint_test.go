package orders

import (
	"strings"
	"testing"
)

func mustFingerprint(t *testing.T, body string) string {
	t.Helper()
	h, err := Fingerprint([]byte(body), HashVersion)
	if err != nil {
		t.Fatalf("Fingerprint(%s): %v", body, err)
	}
	return h
}

func TestFingerprintIgnoresSpellingAndMeta(t *testing.T) {
	base := mustFingerprint(t, validBody)
	same := map[string]string{
		"keys reordered": `{"total":"44.98","placedAt":"2026-11-29T10:00:00Z","orderId":"ORD-2026-000123",
			"lines":[{"unitPrice":"19.99","quantity":2,"sku":"SKU-1"},{"sku":"SKU-7","unitPrice":"5.00","quantity":1}],
			"currency":"EUR","customerId":"CUST-42","meta":{"producer":"web-shop"}}`,
		"no white space":        strings.Join(strings.Fields(validBody), ""),
		"number spelling":       strings.Replace(validBody, `"quantity": 2,`, `"quantity": 2.0e0,`, 1),
		"meta changed":          withField("meta", `{"sentAt":"2026-11-30T00:00:00Z","retry":3}`),
		"meta removed":          withoutField("meta"),
		"escaped string":        strings.Replace(validBody, `"CUST-42"`, `"CUST\u002d42"`, 1),
		"crlf and tabs instead": strings.ReplaceAll(validBody, "\n", "\r\n\t"),
	}
	for name, body := range same {
		t.Run(name, func(t *testing.T) {
			if got := mustFingerprint(t, body); got != base {
				t.Errorf("fingerprint changed: %s != %s", got, base)
			}
		})
	}
	different := map[string]string{
		"quantity":      strings.Replace(validBody, `"quantity": 2,`, `"quantity": 3,`, 1),
		"unit price":    strings.Replace(validBody, `"19.99"`, `"19.98"`, 1),
		"price spelled": strings.Replace(validBody, `"5.00"`, `"5.0"`, 1), // money is a string: spelling counts
		"customer":      withField("customerId", `"CUST-43"`),
		"unknown field": withField("channel", `"web"`),
		"line order":    withField("lines", `[{"sku":"SKU-7","quantity":1,"unitPrice":"5.00"},{"sku":"SKU-1","quantity":2,"unitPrice":"19.99"}]`),
		"placedAt":      withField("placedAt", `"2026-11-29T10:00:01Z"`),
	}
	for name, body := range different {
		t.Run(name, func(t *testing.T) {
			if got := mustFingerprint(t, body); got == base {
				t.Errorf("fingerprint did not change")
			}
		})
	}
}

// The fingerprint is a published rule (docs/contract.md §4): producers in other
// languages may compute it, and stored hashes must stay comparable. The value
// is pinned (computed with sha256sum over the canonical text below) so a
// refactoring cannot change it unnoticed.
func TestFingerprintIsStable(t *testing.T) {
	const canonical = `{"currency":"EUR","customerId":"CUST-42","lines":[{"quantity":2,"sku":"SKU-1","unitPrice":"19.99"},{"quantity":1,"sku":"SKU-7","unitPrice":"5.00"}],"orderId":"ORD-2026-000123","placedAt":"2026-11-29T10:00:00Z","total":"44.98"}`
	const want = "sha256:a25a408ebfd5695889f5f6fe53d419af4934bec740c085c99ed962fb7dd6de58"
	if got := mustFingerprint(t, validBody); got != want {
		t.Errorf("fingerprint = %s, want %s", got, want)
	}
	if got := mustFingerprint(t, canonical); got != want {
		t.Errorf("fingerprint of the canonical form = %s, want %s", got, want)
	}
}

func TestFingerprintUnknownVersion(t *testing.T) {
	if _, err := Fingerprint([]byte(validBody), 2); err == nil {
		t.Fatal("want an error for an unknown hashVersion")
	}
}
