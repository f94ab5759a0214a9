package orders

import (
	"errors"
	"strings"
	"testing"
)

const validBody = `{
  "orderId": "ORD-2026-000123",
  "customerId": "CUST-42",
  "currency": "EUR",
  "lines": [
    { "sku": "SKU-1", "quantity": 2, "unitPrice": "19.99" },
    { "sku": "SKU-7", "quantity": 1, "unitPrice": "5.00" }
  ],
  "total": "44.98",
  "placedAt": "2026-11-29T10:00:00Z",
  "meta": { "sentAt": "2026-11-29T10:00:01.123Z", "producer": "web-shop" }
}`

// withField returns validBody with one top-level member replaced (or added).
func withField(name, rawValue string) string {
	fields, err := decodeObject([]byte(validBody))
	if err != nil {
		panic(err)
	}
	fields[name] = []byte(rawValue)
	b, err := mergeObject(fields, nil)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func withoutField(name string) string {
	fields, _ := decodeObject([]byte(validBody))
	delete(fields, name)
	b, _ := mergeObject(fields, nil)
	return string(b)
}

func TestParseOrderAcceptsTheContractExample(t *testing.T) {
	o, err := ParseOrder([]byte(validBody))
	if err != nil {
		t.Fatalf("ParseOrder: %v", err)
	}
	if o.ID != "ORD-2026-000123" || o.CustomerID != "CUST-42" || o.Currency != "EUR" || o.Total != "44.98" {
		t.Errorf("fields = %+v", o)
	}
	if len(o.Lines) != 2 || o.Lines[0] != (Line{SKU: "SKU-1", Quantity: 2, UnitPrice: "19.99"}) {
		t.Errorf("lines = %+v", o.Lines)
	}
	if !strings.HasPrefix(o.Hash, "sha256:") || len(o.Hash) != len("sha256:")+64 {
		t.Errorf("hash = %q", o.Hash)
	}
}

func TestParseOrderRejects(t *testing.T) {
	long := strings.Repeat("x", 256)
	tests := []struct {
		name   string
		body   string
		reason Reason
		want   string // part of the message
	}{
		{"empty body", ``, MalformedMessage, "empty"},
		{"not JSON", `orderId=1`, MalformedMessage, "not valid JSON"},
		{"truncated JSON", validBody[:60], MalformedMessage, "not valid JSON"},
		{"JSON array", `[1,2]`, MalformedMessage, "not an object"},
		{"JSON null", `null`, MalformedMessage, "not an object"},
		{"JSON string", `"hello"`, MalformedMessage, "not an object"},
		{"trailing data", validBody + `{}`, MalformedMessage, "after the JSON object"},
		{"invalid UTF-8", "{\"orderId\":\"\xff\"}", MalformedMessage, "UTF-8"},
		{"duplicate top-level key", `{"orderId":"A","orderId":"B"}`, MalformedMessage, "twice"},
		{"duplicate nested key", withField("lines", `[{"sku":"S","sku":"T","quantity":1,"unitPrice":"1.00"}]`), MalformedMessage, "duplicate name rule"},
		{"deep nesting", withField("extra", strings.Repeat("[", 40)+strings.Repeat("]", 40)), MalformedMessage, "deeper than"},

		{"orderId missing", withoutField("orderId"), ValidationFailed, "orderId: is required"},
		{"orderId number", withField("orderId", `123`), ValidationFailed, "orderId: must be a string"},
		{"orderId empty", withField("orderId", `""`), ValidationFailed, "must not be empty"},
		{"orderId 256 characters", withField("orderId", `"`+long+`"`), ValidationFailed, "256 characters"},
		{"orderId with slash", withField("orderId", `"A/1"`), ValidationFailed, "/ \\ ? #"},
		{"orderId with backslash", withField("orderId", `"A\\1"`), ValidationFailed, "/ \\ ? #"},
		{"orderId with question mark", withField("orderId", `"A?1"`), ValidationFailed, "/ \\ ? #"},
		{"orderId with hash", withField("orderId", `"A#1"`), ValidationFailed, "/ \\ ? #"},
		{"orderId with control character", withField("orderId", `"A\u00011"`), ValidationFailed, "control characters"},
		{"orderId with tab", withField("orderId", `"A\t1"`), ValidationFailed, "control characters"},
		{"orderId leading space", withField("orderId", `" A1"`), ValidationFailed, "white space"},
		{"orderId trailing space", withField("orderId", `"A1 "`), ValidationFailed, "white space"},
		{"customerId missing", withoutField("customerId"), ValidationFailed, "customerId: is required"},
		{"customerId blank", withField("customerId", `"  "`), ValidationFailed, "customerId: must not be blank"},
		{"customerId too long", withField("customerId", `"`+long+`"`), ValidationFailed, "customerId: is 256"},
		{"currency lower case", withField("currency", `"eur"`), ValidationFailed, "currency: must be three upper-case"},
		{"currency four letters", withField("currency", `"EURO"`), ValidationFailed, "currency"},
		{"lines missing", withoutField("lines"), ValidationFailed, "lines: is required"},
		{"lines empty", withField("lines", `[]`), ValidationFailed, "1 to 100"},
		{"lines object", withField("lines", `{}`), ValidationFailed, "lines: must be an array"},
		{"101 lines", withField("lines", "["+strings.Repeat(`{"sku":"S","quantity":1,"unitPrice":"1"},`, 100)+`{"sku":"S","quantity":1,"unitPrice":"1"}]`), ValidationFailed, "got 101"},
		{"line not object", withField("lines", `[1]`), ValidationFailed, "lines[0]: must be an object"},
		{"sku empty", withField("lines", `[{"sku":"","quantity":1,"unitPrice":"1.00"}]`), ValidationFailed, "lines[0].sku"},
		{"quantity zero", withField("lines", `[{"sku":"S","quantity":0,"unitPrice":"1.00"}]`), ValidationFailed, "lines[0].quantity"},
		{"quantity negative", withField("lines", `[{"sku":"S","quantity":-2,"unitPrice":"1.00"}]`), ValidationFailed, "lines[0].quantity"},
		{"quantity fraction", withField("lines", `[{"sku":"S","quantity":1.5,"unitPrice":"1.00"}]`), ValidationFailed, "integer"},
		{"quantity too large", withField("lines", `[{"sku":"S","quantity":10001,"unitPrice":"1.00"}]`), ValidationFailed, "1 to 10000"},
		{"quantity as string", withField("lines", `[{"sku":"S","quantity":"1","unitPrice":"1.00"}]`), ValidationFailed, "got string"},
		{"unitPrice float", withField("lines", `[{"sku":"S","quantity":1,"unitPrice":19.99}]`), ValidationFailed, "money is never a JSON number"},
		{"unitPrice negative", withField("lines", `[{"sku":"S","quantity":1,"unitPrice":"-1.00"}]`), ValidationFailed, "at least 0"},
		{"unitPrice five decimals", withField("lines", `[{"sku":"S","quantity":1,"unitPrice":"1.00001"}]`), ValidationFailed, "more than 4 digits"},
		{"unitPrice not decimal", withField("lines", `[{"sku":"S","quantity":1,"unitPrice":"1,00"}]`), ValidationFailed, "decimal string"},
		{"total float", withField("total", `44.98`), ValidationFailed, "total: must be a string"},
		{"total wrong", withField("total", `"44.99"`), ValidationFailed, "lines add up to 44.98"},
		{"total missing", withoutField("total"), ValidationFailed, "total: is required"},
		{"placedAt not RFC 3339", withField("placedAt", `"29/11/2026"`), ValidationFailed, "RFC 3339"},
		{"placedAt without zone", withField("placedAt", `"2026-11-29T10:00:00"`), ValidationFailed, "RFC 3339"},
		{"meta not object", withField("meta", `"x"`), ValidationFailed, "meta: must be an object"},
		{"reserved id", withField("id", `"other"`), ValidationFailed, "id: is a name the stored document reserves"},
		{"reserved ttl", withField("ttl", `1`), ValidationFailed, "ttl: is a name"},
		{"reserved system property", withField("_etag", `"x"`), ValidationFailed, "_etag"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseOrder([]byte(tc.body))
			var re *RejectError
			if !errors.As(err, &re) {
				t.Fatalf("err = %v, want a *RejectError", err)
			}
			if re.Reason != tc.reason {
				t.Errorf("reason = %s, want %s (%v)", re.Reason, tc.reason, err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("message %q does not mention %q", err.Error(), tc.want)
			}
		})
	}
}

func TestParseOrderAccepts(t *testing.T) {
	tests := []struct {
		name string
		body string
	}{
		{"255-character orderId", withField("orderId", `"`+strings.Repeat("é", 255)+`"`)},
		{"orderId with inner space and unicode", withField("orderId", `"ORD 1 – ✓"`)},
		{"no meta", withoutField("meta")},
		{"unknown field kept", withField("channel", `"web"`)},
		{"quantity spelled 2.0", withField("lines", `[{"sku":"S","quantity":2.0,"unitPrice":"22.49"}]`)},
		{"total with trailing zero", withField("total", `"44.980"`)},
		{"zero price", withField("lines", `[{"sku":"S","quantity":1,"unitPrice":"0"},{"sku":"T","quantity":2,"unitPrice":"22.49"}]`)},
		{"placedAt with offset and fraction", withField("placedAt", `"2026-11-29T11:00:00.5+01:00"`)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := ParseOrder([]byte(tc.body)); err != nil {
				t.Fatalf("ParseOrder: %v", err)
			}
		})
	}
}

func TestDocumentKeepsFieldsAndAddsBookkeeping(t *testing.T) {
	o, err := ParseOrder([]byte(withField("channel", `"web"`)))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := o.Document(Acceptance{MessageID: "M-1"})
	if err != nil {
		t.Fatal(err)
	}
	fields, err := decodeObject(doc)
	if err != nil {
		t.Fatalf("document is not a JSON object: %v", err)
	}
	for name, want := range map[string]string{
		"id": `"ORD-2026-000123"`, "orderId": `"ORD-2026-000123"`, "type": `"order"`, "channel": `"web"`,
		"hashVersion": `1`, "messageId": `"M-1"`, "requestHash": `"` + o.Hash + `"`,
	} {
		if got := string(fields[name]); got != want {
			t.Errorf("%s = %s, want %s", name, got, want)
		}
	}
	for _, name := range []string{"customerId", "currency", "lines", "total", "placedAt", "meta", "acceptedAt"} {
		if _, ok := fields[name]; !ok {
			t.Errorf("document lacks %s", name)
		}
	}
}
