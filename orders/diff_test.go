package orders_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/ordersink/orders-consumer/orders"
)

// stored is a stored order document as Cosmos DB returns it: the body's
// members with the consumer's bookkeeping and Cosmos DB's own members.
func stored(members string) []byte {
	return []byte(`{"id":"ORD-1","type":"order","requestHash":"sha256:00","hashVersion":1,"messageId":"ORD-1:00","acceptedAt":"2026-12-01T00:00:00Z",` +
		`"_rid":"x","_etag":"\"0\"","_ts":1,` + members + `}`)
}

func TestDiffStored(t *testing.T) {
	tests := []struct {
		name         string
		stored, body string
		want         []string
		wantMore     int
	}{
		{"same order, other member order, meta and spelling", `"orderId":"ORD-1","meta":{"trace":"a"},"total":"10.00","lines":[{"sku":"A","quantity":1}]`,
			`{"lines":[{"quantity":1.0,"sku":"\u0041"}],"total":"10.00","orderId":"ORD-1","meta":{"trace":"b"}}`, nil, 0},
		{"number spellings canonicalise equal", `"orderId":"ORD-1","n":100,"f":0.5`, `{"orderId":"ORD-1","n":1e2,"f":5E-1}`, nil, 0},
		{"a quantity in the third line", `"orderId":"ORD-1","lines":[{"q":1},{"q":1},{"q":2}]`, `{"orderId":"ORD-1","lines":[{"q":1},{"q":1},{"q":3}]}`,
			[]string{"/lines/2/q: 2 → 3"}, 0},
		{"member added and removed", `"orderId":"ORD-1","note":"x"`, `{"orderId":"ORD-1","gift":true}`,
			[]string{`/gift: (absent) → true`, `/note: "x" → (absent)`}, 0},
		{"nested arrays grow and shrink", `"orderId":"ORD-1","m":[[1,2],[3],[4]]`, `{"orderId":"ORD-1","m":[[1,2],[3,5]]}`,
			[]string{"/m/1/1: (absent) → 5", "/m/2: [4] → (absent)"}, 0},
		{"a value changes type", `"orderId":"ORD-1","customer":{"id":"C1"}`, `{"orderId":"ORD-1","customer":"C1"}`,
			[]string{`/customer: {"id":"C1"} → "C1"`}, 0},
		{"names escaped as RFC 6901 says", `"orderId":"ORD-1","a/b~c":1`, `{"orderId":"ORD-1","a/b~c":2}`,
			[]string{"/a~1b~0c: 1 → 2"}, 0},
		{"only meta differs", `"orderId":"ORD-1","meta":1`, `{"orderId":"ORD-1"}`, nil, 0},
		{"strings compared canonically", `"orderId":"ORD-1","s":"é\n"`, `{"orderId":"ORD-1","s":"\u00e9\u000a"}`, nil, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, err := orders.DiffStored(stored(tc.stored), []byte(tc.body), 10)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, c := range d.Changes {
				got = append(got, c.String())
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") || d.More != tc.wantMore {
				t.Errorf("changes:\n%s\nmore %d; want:\n%s\nmore %d", strings.Join(got, "\n"), d.More, strings.Join(tc.want, "\n"), tc.wantMore)
			}
		})
	}
}

// A diff with no change between bodies whose fingerprints differ would
// send the operator looking for nothing: the two agree on every pair.
func TestDiffStoredAgreesWithFingerprint(t *testing.T) {
	bodies := []string{`{"orderId":"ORD-1","n":1}`, `{"orderId":"ORD-1","n":1.0,"meta":{}}`, `{"orderId":"ORD-1","n":2}`,
		`{"orderId":"ORD-1","n":[1]}`, `{"n":1,"orderId":"ORD-1"}`, `{"orderId":"ORD-1"}`}
	for _, a := range bodies {
		for _, b := range bodies {
			fa, err := orders.Fingerprint([]byte(a), orders.HashVersion)
			if err != nil {
				t.Fatal(err)
			}
			fb, err := orders.Fingerprint([]byte(b), orders.HashVersion)
			if err != nil {
				t.Fatal(err)
			}
			d, err := orders.DiffStored(stored(strings.TrimSuffix(strings.TrimPrefix(a, "{"), "}")), []byte(b), 10)
			if err != nil {
				t.Fatal(err)
			}
			if (fa == fb) != (len(d.Changes) == 0) {
				t.Errorf("%s vs %s: fingerprints equal %v, changes %v", a, b, fa == fb, d.Changes)
			}
		}
	}
}

// At the limit: limit changes are all listed; one more is counted.
func TestDiffStoredAtTheLimit(t *testing.T) {
	for n, wantMore := range map[int]int{10: 0, 11: 1} {
		zeros, ones := strings.Repeat("0,", n), strings.Repeat("1,", n)
		d, err := orders.DiffStored(stored(`"orderId":"ORD-1","a":[`+strings.TrimSuffix(zeros, ",")+`]`),
			[]byte(`{"orderId":"ORD-1","a":[`+strings.TrimSuffix(ones, ",")+`]}`), 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(d.Changes) != 10 || d.More != wantMore {
			t.Errorf("%d changes: %d listed, %d more; want 10 and %d", n, len(d.Changes), d.More, wantMore)
		}
	}
}

// A huge diff lists limit changes and counts the rest; each value is cut.
func TestDiffStoredBounds(t *testing.T) {
	var a, b strings.Builder
	for i := range 500 {
		fmt.Fprintf(&a, `{"q":%d},`, i)
		fmt.Fprintf(&b, `{"q":%d},`, i+1)
	}
	long := strings.Repeat("é", 1000)
	d, err := orders.DiffStored(stored(`"orderId":"ORD-1","s":"`+long+`","lines":[`+strings.TrimSuffix(a.String(), ",")+`]`),
		[]byte(`{"orderId":"ORD-1","s":"x","lines":[`+strings.TrimSuffix(b.String(), ",")+`]}`), 20)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Changes) != 20 || d.More != 481 {
		t.Fatalf("got %d changes and %d more, want 20 listed and 481 more", len(d.Changes), d.More)
	}
	if got := d.Changes[0].Path; got != "/lines/0/q" {
		t.Errorf("first change at %s, want /lines/0/q", got)
	}
	for _, c := range d.Changes {
		if len(c.Stored) > orders.MaxChangeValue || len(c.Incoming) > orders.MaxChangeValue {
			t.Errorf("%s: a value is longer than %d bytes", c.Path, orders.MaxChangeValue)
		}
	}
	d, err = orders.DiffStored(stored(`"orderId":"ORD-1","s":"`+long+`"`), []byte(`{"orderId":"ORD-1","s":"x"}`), 20)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Changes) != 1 {
		t.Fatalf("changes %v, want one", d.Changes)
	}
	if s := d.Changes[0].Stored; len(s) > orders.MaxChangeValue || !strings.HasSuffix(s, "…") || !strings.HasPrefix(s, `"éé`) {
		t.Errorf("long value shown as %q (%d bytes), want it cut to %d bytes with …", s, len(s), orders.MaxChangeValue)
	}
}

func TestDiffStoredRefusesWhatTheFingerprintRefuses(t *testing.T) {
	for _, body := range []string{`[1]`, `{"a":1,"a":2}`, `{"a":` + strings.Repeat("[", orders.MaxDepth+1)} {
		_, err := orders.DiffStored(stored(`"orderId":"ORD-1"`), []byte(body), 10)
		var rej *orders.RejectError
		if !errors.As(err, &rej) {
			t.Errorf("%.40s: err %v, want a RejectError", body, err)
		}
	}
}

func BenchmarkDiffStored(b *testing.B) {
	var a, c strings.Builder
	for i := range 100 {
		fmt.Fprintf(&a, `{"sku":"SKU-%d","quantity":%d,"unitPrice":"9.99"},`, i, i)
		fmt.Fprintf(&c, `{"sku":"SKU-%d","quantity":%d,"unitPrice":"9.99"},`, i, i+i%2)
	}
	doc := stored(`"orderId":"ORD-1","lines":[` + strings.TrimSuffix(a.String(), ",") + `]`)
	body := []byte(`{"orderId":"ORD-1","lines":[` + strings.TrimSuffix(c.String(), ",") + `]}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := orders.DiffStored(doc, body, 20); err != nil {
			b.Fatal(err)
		}
	}
}

// FuzzDiffStoredAgreesWithFingerprint: a stored order and a body have no
// change between them exactly when their fingerprints are equal.
func FuzzDiffStoredAgreesWithFingerprint(f *testing.F) {
	f.Add(`{"n":1}`, `{"n":1.0}`)
	f.Add(`{"s":"\u00e9","meta":1}`, `{"s":"é"}`)
	f.Add(`{"a":[[1,{"b":null}]]}`, `{"a":[[1,{"b":false}]]}`)
	f.Add(`{"x":1}`, `{"x":1,"y":[]}`)
	f.Fuzz(func(t *testing.T, order, body string) {
		fa, errA := orders.Fingerprint([]byte(order), orders.HashVersion)
		fb, errB := orders.Fingerprint([]byte(body), orders.HashVersion)
		var members map[string]json.RawMessage
		if errA != nil || errB != nil || json.Unmarshal([]byte(order), &members) != nil {
			return
		}
		for name := range members {
			// The stored document's own members: validation refuses them in
			// an order, and the comparison leaves them out.
			if strings.HasPrefix(name, "_") || slices.Contains([]string{"id", "type", "ttl", "requestHash", "hashVersion", "messageId", "acceptedAt"}, name) {
				return
			}
		}
		inner := strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(order), "{"), "}")
		if strings.TrimSpace(inner) != "" {
			inner = "," + inner
		}
		d, err := orders.DiffStored([]byte(`{"id":"ORD-1","type":"order","_ts":1`+inner+`}`), []byte(body), 10)
		if err != nil {
			t.Fatalf("both fingerprint, but the diff fails: %v", err)
		}
		if (fa == fb) != (len(d.Changes) == 0 && d.More == 0) {
			t.Fatalf("fingerprints equal %v, changes %v (+%d)", fa == fb, d.Changes, d.More)
		}
	})
}
