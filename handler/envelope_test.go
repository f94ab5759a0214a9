package handler

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ordersink/orders-consumer/orders/orderstest"
)

func TestDecodeHostFixtures(t *testing.T) {
	tests := []struct {
		file      string
		body      string
		messageID string
		delivery  int
		enqueued  string
		copied    bool // the host copied the body's members into Metadata
		shadowed  bool
	}{
		{"single-double-encoded.json", orderstest.ExampleBody, "ORD-2026-000123", 1, "2026-11-29T10:00:02Z", true, false},
		{"single-single-encoded.json", orderstest.ExampleBody, "ORD-2026-000123", 1, "2026-11-29T10:00:02Z", true, false},
		{"single-base64.json", orderstest.ExampleBody, "ORD-2026-000123", 1, "2026-11-29T10:00:02Z", false, false},
		{"shadowed-delivery-count.json", "", "ORD-2026-000123", 1, "2026-11-29T10:00:02Z", true, true},
		{"minimal-metadata.json", orderstest.ExampleBody, "ORD-2026-000123", 3, "", true, false},
		{"docs-example-bare-scalars.json", orderstest.ExampleBody, "ORD-2026-000123", 2, "2026-11-29T10:00:02Z", true, false},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join("testdata", "invocations", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			inv, err := decodeInvocation(raw)
			if err != nil {
				t.Fatalf("decodeInvocation: %v", err)
			}
			body, copied, err := inv.triggerText(TriggerBinding)
			if err != nil {
				t.Fatalf("triggerText: %v", err)
			}
			if copied != tc.copied {
				t.Errorf("copied = %v, want %v", copied, tc.copied)
			}
			if tc.body != "" && string(body) != tc.body {
				t.Errorf("body = %s\nwant   %s", body, tc.body)
			}
			if !json.Valid(body) {
				t.Errorf("body is not JSON: %s", body)
			}
			if id, _ := metaString(inv.Metadata.MessageId); id != tc.messageID {
				t.Errorf("MessageId = %q, want %q", id, tc.messageID)
			}
			// For the shadowed fixture the decoder sees the body's value (1),
			// not the real 7: that is why such bodies are rejected.
			if n, _ := metaInt(inv.Metadata.DeliveryCount); n != tc.delivery {
				t.Errorf("DeliveryCount = %d, want %d", n, tc.delivery)
			}
			var enqueued string
			if s, ok := metaString(inv.Metadata.EnqueuedTimeUtc); ok {
				if ts, ok := parseHostTime(s); ok {
					enqueued = ts.Format(time.RFC3339)
				}
			}
			if enqueued != tc.enqueued {
				t.Errorf("EnqueuedTimeUtc = %q, want %q", enqueued, tc.enqueued)
			}
			if got := len(shadowedKeys(body)) > 0; got != tc.shadowed {
				t.Errorf("shadowed = %v, want %v", got, tc.shadowed)
			}
		})
	}
}

func TestHostInvocationHelperMatchesFixture(t *testing.T) {
	// The helper the integration tests use must produce what the fixture,
	// built independently from the reference, holds.
	raw, err := os.ReadFile(filepath.Join("testdata", "invocations", "single-double-encoded.json"))
	if err != nil {
		t.Fatal(err)
	}
	var fixture, built struct{ Data, Metadata map[string]json.RawMessage }
	if err := json.Unmarshal(raw, &fixture); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(hostStringInvocation([]byte(orderstest.ExampleBody), "ORD-2026-000123", 1), &built); err != nil {
		t.Fatal(err)
	}
	if string(fixture.Data[TriggerBinding]) != string(built.Data[TriggerBinding]) {
		t.Errorf("Data differs:\n%s\n%s", fixture.Data[TriggerBinding], built.Data[TriggerBinding])
	}
	for _, k := range []string{"DeliveryCount", "MessageId", "EnqueuedTimeUtc", "orderId", "total", "meta"} {
		if !jsonEqual(fixture.Metadata[k], built.Metadata[k]) {
			t.Errorf("Metadata[%s]: fixture %s, helper %s", k, fixture.Metadata[k], built.Metadata[k])
		}
	}
}

func jsonEqual(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return string(xa) == string(ya)
}

func TestDecodeTriggerValueShapes(t *testing.T) {
	tests := []struct {
		name    string
		raw     string
		want    string
		wantErr bool
	}{
		{"double encoded", `"\"{\\\"a\\\":1}\""`, `{"a":1}`, false},
		{"single encoded", `"{\"a\":1}"`, `{"a":1}`, false},
		{"base64", `"eyJhIjoxfQ=="`, `{"a":1}`, false},
		{"object", `{"a":1}`, `{"a":1}`, false},
		{"plain text kept", `"hello world"`, `hello world`, false},
		{"null", `null`, ``, true},
		{"number", `12`, ``, true},
		{"broken string", `"abc`, ``, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, _, err := decodeTriggerValue(json.RawMessage(tc.raw))
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tc.wantErr)
			}
			if string(got) != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestParseHostTime(t *testing.T) {
	for _, s := range []string{"2025-06-01T10:00:00", "2025-06-01T10:00:00.123", "2025-06-01T10:00:00.1234567", "2025-06-01T10:00:00+00:00", "2025-06-01T10:00:00Z"} {
		ts, ok := parseHostTime(s)
		if !ok || ts.Format("2006-01-02T15:04:05") != "2025-06-01T10:00:00" || ts.Location() != time.UTC {
			t.Errorf("parseHostTime(%q) = %v, %v", s, ts, ok)
		}
	}
	if _, ok := parseHostTime("01/06/2025"); ok {
		t.Error("accepted a non-ISO date")
	}
}

func TestShadowedKeys(t *testing.T) {
	tests := []struct {
		body string
		want string
	}{
		{orderstest.ExampleBody, ""},
		{`{"orderId":"A","DeliveryCount":1}`, "DeliveryCount"},
		{`{"orderId":"A","deliverycount":1}`, "deliverycount"},
		{`{"orderId":"A","\u0044eliveryCount":1}`, "DeliveryCount"},
		{`{"orderId":"A","SYS":{},"to":"Bob","client":"x"}`, ""}, // metadata the handler never reads
		{`{"orderId":"A","label":"gift"}`, "label"},
		{`{"orderId":"A","note":"to"}`, ""}, // a value, not a member
		{`{"orderId":"Zoë","total":"1"}`, ""},
	}
	for _, tc := range tests {
		if got := strings.Join(shadowedKeys([]byte(tc.body)), ","); got != tc.want {
			t.Errorf("shadowedKeys(%s) = %q, want %q", tc.body, got, tc.want)
		}
	}
}

// The cheap test clears a plain ASCII body that names no key the handler
// reads, so that most bodies skip the full parse, and sends on every body
// with a byte past ASCII or an escape, which could spell a key.
func TestShadowPrefilter(t *testing.T) {
	for _, tc := range []struct {
		body string
		may  bool
	}{
		{orderstest.ExampleBody, false},
		{`{"orderId":"A","note":"messageid"}`, true},
		{`{"orderId":"A","x":"\u0041"}`, true},
		{`{"orderId":"é"}`, true},
		{"{\"orderId\":\"\x80\"}", true},
	} {
		if got := mayShadow([]byte(tc.body)); got != tc.may {
			t.Errorf("mayShadow(%q) = %v, want %v", tc.body, got, tc.may)
		}
	}
}

// FuzzShadowPrefilter: the cheap test never clears a body the full check
// would refuse.
func FuzzShadowPrefilter(f *testing.F) {
	f.Add([]byte(orderstest.ExampleBody))
	f.Add([]byte(`{"\u0044eliveryCount":1}`))
	f.Add([]byte(`{"ſys":1}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		if keys := parseShadowedKeys(body); len(keys) > 0 && !mayShadow(body) {
			t.Fatalf("prefilter cleared %q, which shadows %v", body, keys)
		}
	})
}

// FuzzDecodeInvocation: no request makes the envelope decoder panic.
func FuzzDecodeInvocation(f *testing.F) {
	addRequestSeeds(f)
	f.Fuzz(func(t *testing.T, request []byte) {
		inv, err := decodeInvocation(request)
		if err != nil {
			return
		}
		body, _, err := inv.triggerText(TriggerBinding)
		if err == nil {
			shadowedKeys(body)
		}
		metaString(inv.Metadata.MessageId)
		metaInt(inv.Metadata.DeliveryCount)
		if s, ok := metaString(inv.Metadata.EnqueuedTimeUtc); ok {
			parseHostTime(s)
		}
	})
}
