package handler

import (
	"bytes"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ordersink/orders-consumer/handler/handlertest"
	"github.com/ordersink/orders-consumer/orders"
	"github.com/ordersink/orders-consumer/orders/orderstest"
)

// withMember inserts a raw member into an order body.
func withMember(body []byte, member string) []byte {
	return bytes.Replace(body, []byte(`"currency"`), []byte(member+`,"currency"`), 1)
}

// objectOf returns an object of n members.
func objectOf(n int) string {
	var b strings.Builder
	b.WriteByte('{')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"k%05d":0`, i)
	}
	return b.String() + "}"
}

// TestProcessOrderBodyLimits: each limit and I-JSON rule of docs/contract.md §3,
// through the real handler and Cosmos, just under (created) and just over
// (parked as MalformedMessage naming the rule, nothing written). "x" is a
// member of the body's object: its value starts at level 2.
func TestProcessOrderBodyLimits(t *testing.T) {
	s := startServer(t, testEnv(t).Store, 0)
	deep := func(levels int) string { return strings.Repeat("[", levels) + strings.Repeat("]", levels) }
	objects := func(levels int) string {
		return strings.Repeat(`{"a":`, levels-1) + "{}" + strings.Repeat("}", levels-1)
	}
	// mixed alternates objects and arrays, levels of them.
	var mixed func(levels int) string
	mixed = func(levels int) string {
		switch {
		case levels == 1:
			return "[]"
		case levels%2 == 0:
			return `{"a":` + mixed(levels-1) + "}"
		}
		return "[" + mixed(levels-1) + "]"
	}
	str := func(n int) string { return `"` + strings.Repeat("a", n) + `"` }
	values := func(n int) string { return "[" + strings.TrimSuffix(strings.Repeat("0,", n), ",") + "]" }
	// The example order holds 18 values (objects, arrays, leaves); "x" adds an
	// array and its elements.
	const exampleValues = 18
	tests := []struct {
		name, member, rule string // rule "" means created
	}{
		{"depth 32", `"x":` + deep(orders.MaxDepth-1), ""},
		{"depth 33", `"x":` + deep(orders.MaxDepth), "depth limit"},
		// The depth limit holds for objects as for arrays.
		{"depth 32, objects", `"x":` + objects(orders.MaxDepth-1), ""},
		{"depth 33, objects", `"x":` + objects(orders.MaxDepth), "depth limit"},
		{"depth 32, objects and arrays", `"x":` + mixed(orders.MaxDepth-1), ""},
		{"depth 33, objects and arrays", `"x":` + mixed(orders.MaxDepth), "depth limit"},
		{"depth 33, an object in arrays", `"x":` + strings.Repeat("[", orders.MaxDepth-1) + "{}" + strings.Repeat("]", orders.MaxDepth-1), "depth limit"},
		{"1000 members", `"x":` + objectOf(orders.MaxMembers), ""},
		{"1001 members", `"x":` + objectOf(orders.MaxMembers+1), "member limit"},
		{"20000 members", `"x":` + objectOf(20_000), "member limit"},
		{"40000 members", `"x":` + objectOf(40_000), "member limit"},
		{"string of 64 KiB", `"x":` + str(orders.MaxTokenBytes), ""},
		{"string of 64 KiB + 1", `"x":` + str(orders.MaxTokenBytes+1), "string length limit"},
		{"10000 values", `"x":` + values(orders.MaxValues-exampleValues-1), ""},
		{"10001 values", `"x":` + values(orders.MaxValues-exampleValues), "value count limit"},
		{"lone surrogate", `"x":"\ud800\u0041"`, "I-JSON string rule"},
		{"integer past 2^64", `"x":12345678901234567890`, "I-JSON number rule"},
		{"underflow", `"x":1e-400`, "I-JSON number rule"},
		{"integer 2^53", `"x":9007199254740992`, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			id, body := handlertest.UniqueOrder(t)
			a := s.invoke(t, hostInvocation(withMember(body, tc.member), id, 1))
			e := a.parked(t)
			if a.Status != http.StatusOK {
				t.Fatalf("status %d, want 200", a.Status)
			}
			docs := handlertest.DocumentsOfType(partition(t, id), "order")
			if tc.rule == "" {
				if e != nil || len(docs) != 1 {
					t.Fatalf("parked %+v, %d orders stored; want created", e, len(docs))
				}
				return
			}
			if e == nil || e.Reason != orders.MalformedMessage || !strings.Contains(e.Description, tc.rule) {
				t.Fatalf("parked %+v, want MalformedMessage naming the %s", e, tc.rule)
			}
			if len(docs) != 0 {
				t.Errorf("a refused body wrote %d orders", len(docs))
			}
		})
	}
}

// TestProcessOrderChangedOrderIsNotADuplicate: a resend that differs only
// where RFC 8785 would lose information was completed as a duplicate of the
// stored order (gowebpki/jcs gave both one fingerprint). Now it is parked,
// and the stored order keeps its content.
func TestProcessOrderChangedOrderIsNotADuplicate(t *testing.T) {
	s := startServer(t, testEnv(t).Store, 0)
	pairs := []struct{ name, stored, resent string }{
		{"integer past 2^53", `"ref":9007199254740992`, `"ref":9007199254740993`},
		{"underflow", `"ref":0`, `"ref":1e-400`},
		{"lone surrogate", `"note":"\ufffd"`, `"note":"\ud800\u0041"`},
	}
	for _, p := range pairs {
		t.Run(p.name, func(t *testing.T) {
			id, body := handlertest.UniqueOrder(t)
			if a := s.invoke(t, hostInvocation(withMember(body, p.stored), id, 1)); a.parked(t) != nil {
				t.Fatalf("the first order was parked: %+v", a.parked(t))
			}
			a := s.invoke(t, hostInvocation(withMember(body, p.resent), id, 1))
			e := a.parked(t)
			if e == nil || e.Reason != orders.MalformedMessage || !strings.Contains(e.Description, "I-JSON") {
				t.Fatalf("resend with other content: parked %+v, want MalformedMessage (I-JSON); logs %v", e, a.Logs)
			}
		})
	}
}

func TestOversizedRequestStaysWholeInTheBroker(t *testing.T) {
	const limit = 64 << 10
	logs := &orderstest.Buffer{}
	srv := httptest.NewServer(NewServer(Config{
		Processor: &orders.Processor{Store: testEnv(t).Store}, Logger: slog.New(slog.NewJSONHandler(logs, nil)), MaxRequestBytes: limit,
	}))
	defer srv.Close()
	s := &testServer{&handlertest.Server{URL: srv.URL, Logs: logs}}
	id, body := handlertest.UniqueOrder(t)
	pad := func(n int) []byte {
		return []byte(strings.Replace(string(body), `"currency"`, `"note":"`+strings.Repeat("x", n)+`","currency"`, 1))
	}
	// Find the padding that makes the request exactly limit bytes.
	n := limit - len(hostInvocation(pad(0), id, 1))
	n -= n / 4 // base64 takes 4 bytes for 3
	for len(hostInvocation(pad(n+1), id, 1)) <= limit {
		n++
	}
	for len(hostInvocation(pad(n), id, 1)) > limit {
		n--
	}
	if a := s.invoke(t, hostInvocation(pad(n), id, 1)); a.Status != http.StatusOK || a.parked(t) != nil {
		t.Fatalf("a request at the limit: status %d", a.Status)
	}
	over := s.invoke(t, hostInvocation(pad(n+3), id+"-over", 1))
	if over.Status/100 == 2 {
		t.Fatalf("status %d: a request over the limit must stay whole in the broker, not be completed", over.Status)
	}
	if !strings.Contains(logs.String(), `"level":"ERROR"`) || !strings.Contains(logs.String(), "MAX_REQUEST_BYTES") {
		t.Errorf("no ERROR line naming the setting: %s", logs.String())
	}
	if docs := partition(t, id+"-over"); len(docs) != 0 {
		t.Errorf("oversized request wrote %d documents", len(docs))
	}
}

// §3: quantity is an integer from 1 to 10000; the boundary itself is accepted.
func TestQuantityBoundary(t *testing.T) {
	s := startServer(t, testEnv(t).Store, 0)
	tests := []struct {
		quantity int
		total    string
		created  bool
	}{
		{1, "0.01", true},
		{orders.MaxQuantity, "100.00", true},
		{orders.MaxQuantity + 1, "100.01", false},
		{0, "0.00", false},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprint(tc.quantity), func(t *testing.T) {
			id, _ := handlertest.UniqueOrder(t)
			body := fmt.Appendf(nil, `{"orderId":%q,"customerId":"CUST-42","currency":"EUR","lines":[{"sku":"SKU-1","quantity":%d,"unitPrice":"0.01"}],"total":%q,"placedAt":"2026-11-29T10:00:00Z"}`,
				id, tc.quantity, tc.total)
			a := s.invoke(t, hostInvocation(body, id, 1))
			if a.Status != http.StatusOK {
				t.Fatalf("status %d", a.Status)
			}
			e := a.parked(t)
			switch {
			case tc.created && (e != nil || a.Outcome() != "created"):
				t.Errorf("quantity %d: parked %+v, logs %v; want created", tc.quantity, e, a.Logs)
			case !tc.created && (e == nil || e.Reason != orders.ValidationFailed || !strings.Contains(e.Description, "lines[0].quantity")):
				t.Errorf("quantity %d: parked %+v; want ValidationFailed naming lines[0].quantity", tc.quantity, e)
			}
		})
	}
}
