package hostemu

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// The docs/host-wire-format.md §1.6 examples, constructed from the host source, are the
// fixtures: after normalising the outer JSON (member order, white space) every
// value, including the inner double-encoded strings, must match byte for byte.

const (
	refNamespace = "contoso-sb.servicebus.windows.net"
	refClientID  = "contoso-sb.servicebus.windows.net-3f0c7a4e-2f43-4a0b-9b8e-5d1b8a6e2c11"
	refBody1     = `{"orderId":"A-1001","customerId":"C-42","items":[{"sku":"SKU-1","qty":2,"price":9.99}],"total":19.98,"currency":"EUR"}`
	refBody2     = `{"orderId":"A-1002","customerId":"C-7","items":[{"sku":"SKU-9","qty":1,"price":5.0}],"total":5.0,"currency":"EUR"}`
	refBody3     = `{"orderId":"A-1003","customerId":"C-42","items":[],"total":0,"currency":"EUR"}`
)

func refEncoder(now string, guid string) *Encoder {
	t := at(now)
	return &Encoder{Namespace: refNamespace, ClientID: refClientID,
		Now: func() time.Time { return t }, NewGUID: func() string { return guid }}
}

func at(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return t
}

// refMessage1 is the first message of both reference invocations.
func refMessage1() *Message {
	return &Message{Body: []byte(refBody1), MessageID: "A-1001", ContentType: "application/json",
		CorrelationID:         "c0ffee00-0000-4000-8000-000000000001",
		ApplicationProperties: json.RawMessage(`{"tenant":"contoso","schemaVersion":2}`),
		SequenceNumber:        4711, EnqueuedTime: at("2025-06-01T10:00:00.123Z")}
}

func TestEncodeSingleMatchesReference(t *testing.T) {
	fn := &Function{Name: "ProcessOrder", Bindings: []Binding{{Name: "orderMsg", Type: "serviceBusTrigger", Direction: "in", QueueName: "orders"}}}
	m := refMessage1()
	enc := refEncoder("2025-06-01T10:00:00.5123456Z", "5e3b1a2c-9d8f-4e7a-b6c5-0a1b2c3d4e5f")
	got, err := enc.Single(fn, Delivery{Message: m, DeliveryCount: 1, LockToken: "9d2f6c1e-7b7a-4c55-8a3e-1f0e2d3c4b5a"})
	if err != nil {
		t.Fatal(err)
	}
	assertSameJSON(t, got, readFixture(t, "reference-single.json"))
}

func TestEncodeBatchMatchesReference(t *testing.T) {
	fn := &Function{Name: "ProcessOrderBatch", Bindings: []Binding{{Name: "orderMsgs", Type: "serviceBusTrigger", Direction: "in",
		QueueName: "orders", Cardinality: "many", DataType: "string"}}}
	first := refMessage1()
	first.Subject = "order.created"
	ds := []Delivery{
		{DeliveryCount: 1, LockToken: "9d2f6c1e-7b7a-4c55-8a3e-1f0e2d3c4b5a", Message: first},
		{DeliveryCount: 1, LockToken: "0b1c2d3e-4f50-4a6b-8c7d-9e0f1a2b3c4d", Message: &Message{
			Body: []byte(refBody2), MessageID: "A-1002", ContentType: "application/json", Subject: "order.created",
			ApplicationProperties: json.RawMessage(`{"tenant":"fabrikam"}`),
			SequenceNumber:        4712, EnqueuedTime: at("2025-06-01T10:00:01.456Z")}},
		{DeliveryCount: 3, LockToken: "7f6e5d4c-3b2a-4190-8f7e-6d5c4b3a2910", Message: &Message{
			Body: []byte(refBody3), MessageID: "A-1003", Subject: "order.created",
			SequenceNumber: 4698, EnqueuedTime: at("2025-06-01T09:58:12.789Z")}},
	}
	enc := refEncoder("2025-06-01T10:00:02.0456789Z", "1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d")
	got, err := enc.Batch(fn, ds)
	if err != nil {
		t.Fatal(err)
	}
	assertSameJSON(t, got, readFixture(t, "reference-batch.json"))
}

func TestEncodeSingleBodyMembers(t *testing.T) {
	fn := &Function{Name: "F", Bindings: []Binding{{Name: "message", Type: "serviceBusTrigger", Direction: "in"}}}
	enc := refEncoder("2026-11-29T10:00:00Z", "g")
	tests := []struct {
		name string
		body string
		want map[string]any // Metadata members; nil value = absent
	}{
		{"scalars become double-encoded strings",
			`{"s":"x<&>\u2028","i":12345678901234567890,"f":5.0,"g":1e21,"h":0.00001,"t":true,"n":null,"a":[1],"o":{"k":1}}`,
			map[string]any{"s": "\"x<&>\\u2028\"", "i": `"12345678901234567890"`, "f": `"5"`, "g": `"1E+21"`, "h": `"1E-05"`,
				"t": `"True"`, "n": nil, "a": nil, "o": map[string]any{"k": 1.0}}},
		{"ISO dates are read as DateTime and printed in the invariant culture",
			`{"placedAt":"2026-11-29T10:00:00Z","local":"2026-11-29T10:00:00.5+01:00","plain":"2026-11-29"}`,
			map[string]any{"placedAt": `"11/29/2026 10:00:00"`, "local": `"11/29/2026 09:00:00"`, "plain": `"2026-11-29"`}},
		{"a body member overwrites the system key, in any case",
			`{"deliveryCount":7,"MessageId":"forged","sys":{"MethodName":"x"}}`,
			map[string]any{"DeliveryCount": `"7"`, "MessageId": `"forged"`, "sys": map[string]any{"MethodName": "x"}, "deliveryCount": nil}},
		{"text that is not a JSON object adds nothing", `{"orderId": "A-1"`,
			map[string]any{"orderId": nil, "DeliveryCount": "1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &Message{Body: []byte(tt.body), MessageID: "M", EnqueuedTime: at("2026-11-29T10:00:00Z")}
			b, err := enc.Single(fn, Delivery{Message: m, DeliveryCount: 1, LockToken: "L"})
			if err != nil {
				t.Fatal(err)
			}
			var inv struct {
				Data     map[string]string
				Metadata map[string]any
			}
			if err := json.Unmarshal(b, &inv); err != nil {
				t.Fatal(err)
			}
			var text string
			if err := json.Unmarshal([]byte(inv.Data["message"]), &text); err != nil || text != tt.body {
				t.Errorf("Data.message decodes twice to %q (%v), want the body", text, err)
			}
			for k, want := range tt.want {
				got, ok := inv.Metadata[k]
				if want == nil {
					if ok {
						t.Errorf("Metadata.%s = %#v, want absent", k, got)
					}
					continue
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("Metadata.%s = %#v, want %#v", k, got, want)
				}
			}
		})
	}
}

func TestEncodeBinaryAndInvalidUTF8(t *testing.T) {
	enc := refEncoder("2026-11-29T10:00:00Z", "g")
	bad := &Message{Body: []byte{'{', 0xff, '}'}, MessageID: "M", EnqueuedTime: at("2026-11-29T10:00:00Z")}
	str := &Function{Name: "F", Bindings: []Binding{{Name: "m", Type: "serviceBusTrigger", Direction: "in"}}}
	// A string binding decodes leniently and calls the handler anyway.
	s, err := enc.Single(str, Delivery{Message: bad, DeliveryCount: 1})
	var inv struct{ Data struct{ M string } }
	var body string
	if err != nil || json.Unmarshal(s, &inv) != nil || json.Unmarshal([]byte(inv.Data.M), &body) != nil || body != "{\uFFFD}" {
		t.Errorf("string trigger, invalid UTF-8: body %q, %v; want it with U+FFFD", body, err)
	}
	ds := []Delivery{{Message: bad, DeliveryCount: 1}}
	many := &Function{Name: "F", Bindings: []Binding{{Name: "m", Type: "serviceBusTrigger", Direction: "in", DataType: "string", Cardinality: "many"}}}
	if b, err := enc.Batch(many, ds); err != nil || !strings.Contains(string(b), "{"+"�"+"}") {
		t.Errorf("string batch trigger, invalid UTF-8: %.200s, %v; want the body with U+FFFD", b, err)
	}
	bin := &Function{Name: "F", Bindings: []Binding{{Name: "m", Type: "serviceBusTrigger", Direction: "in", DataType: "binary"}}}
	b, err := enc.Single(bin, Delivery{Message: bad, DeliveryCount: 1})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"Data":{"m":"e/99"}`) {
		t.Errorf("binary trigger: %s, want the body as base64", b)
	}
}

func TestQuoteMatchesNewtonsoft(t *testing.T) {
	tests := map[string]string{
		`a"b\c`:          `"a\"b\\c"`,
		"<&>'":           `"<&>'"`,
		"\x00\x1f\b\f":   `"\u0000\u001f\b\f"`,
		"\n\r\t":         `"\n\r\t"`,
		"\u0085\u2028é€": `"\u0085\u2028é€"`,
	}
	for in, want := range tests {
		if got := string(quote(in)); got != want {
			t.Errorf("quote(%q) = %s, want %s", in, got, want)
		}
	}
}

func readFixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// assertSameJSON compares two JSON texts after decoding: member order and
// white space do not matter, every string must match exactly.
func assertSameJSON(t *testing.T, got, want []byte) {
	t.Helper()
	var g, w map[string]any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("encoder output is not JSON: %v\n%s", err, got)
	}
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatal(err)
	}
	for _, part := range []string{"Data", "Metadata"} {
		gp, _ := g[part].(map[string]any)
		wp, _ := w[part].(map[string]any)
		for k, wv := range wp {
			if gv, ok := gp[k]; !ok {
				t.Errorf("%s.%s missing, want %#v", part, k, wv)
			} else if !reflect.DeepEqual(gv, wv) {
				t.Errorf("%s.%s:\n got %#v\nwant %#v", part, k, gv, wv)
			}
		}
		for k, gv := range gp {
			if _, ok := wp[k]; !ok {
				t.Errorf("%s.%s = %#v is not in the reference", part, k, gv)
			}
		}
	}
	if len(g) != 2 {
		t.Errorf("envelope has %d members, want Data and Metadata", len(g))
	}
}
