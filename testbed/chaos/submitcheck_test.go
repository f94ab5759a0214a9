package chaos

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/ordersink/orders-consumer/testbed/orderstream"
)

// apiTestOrder is an order body for orderId with quantity q of one line.
func apiTestOrder(orderID string, q int) []byte {
	return fmt.Appendf(nil, `{"orderId":%q,"customerId":"C-1","currency":"EUR","lines":[{"sku":"S","quantity":%d,"unitPrice":"1.00"}],"total":"%d.00","placedAt":"2026-11-29T10:00:00Z"}`, orderID, q, q)
}

// view is the public view of body as SubmitOrder and GetOrder answer it.
func view(body []byte) string {
	var m map[string]any
	_ = json.Unmarshal(body, &m)
	m["requestHash"], m["hashVersion"], m["acceptedAt"] = orderstream.ContentKey(body), 1, "2026-12-01T10:00:00Z"
	b, _ := json.Marshal(m)
	return string(b)
}

// storedDocs are the documents SubmitOrder writes for body owned by client.
func storedDocs(docs map[string][]json.RawMessage, client string, body []byte) {
	var m map[string]any
	_ = json.Unmarshal(body, &m)
	hash := orderstream.ContentKey(body)
	m["id"], m["type"], m["owner"], m["submissionId"], m["requestHash"] = m["orderId"], "order", ownerOf(client), "abc", hash
	o, _ := json.Marshal(m)
	e, _ := json.Marshal(map[string]string{"id": m["orderId"].(string) + ":event:OrderAccepted", "orderId": m["orderId"].(string), "requestHash": hash})
	docs["order"] = append(docs["order"], o)
	docs["outboxEvent"] = append(docs["outboxEvent"], e)
}

// submitFixture is a good run of SubmitChecks: two clients' submissions
// and the answers they got, which each case of TestSubmitChecks changes.
type submitFixture struct {
	subs            []orderstream.Submission
	good            []Answer
	w1, w2, w3, w3b []byte
	// ok is a 2xx answer to key with the view of body.
	ok func(key string, body []byte, status, copyNo, attempt int, replayed bool) Answer
}

func newSubmitFixture() *submitFixture {
	const (
		reused = "https://example.test/docs/http-api.md#idempotency-key-reused"
		taken  = "https://example.test/docs/http-api.md#order-id-taken"
	)
	a, b := orderstream.ClientA, orderstream.ClientB
	w1, w2, w3, w3b := apiTestOrder("W-1", 1), apiTestOrder("W-2", 2), apiTestOrder("W-3", 3), apiTestOrder("W-3", 4)
	rival := orderstream.Submission{Client: b, Key: "k4", OrderID: "W-3", Body: w3b, Copies: 1}
	subs := []orderstream.Submission{
		{Client: a, Key: "k1", OrderID: "W-1", Body: w1, Copies: 2},
		{Client: a, Key: "k2", OrderID: "W-2", Body: w2, Reuse: apiTestOrder("W-2", 9)},
		{Client: a, Key: "k5", OrderID: "W-2", Body: w2}, // again under a new key
		{Client: a, Key: "k3", OrderID: "W-3", Body: w3, Rival: &rival},
		rival,
	}
	ok := func(key string, body []byte, status, copyNo, attempt int, replayed bool) Answer {
		id := subs[0].OrderID
		for _, s := range subs {
			if s.Key == key {
				id = s.OrderID
			}
		}
		ans := Answer{Client: a, Key: key, OrderID: id, Copy: copyNo, Attempt: attempt, Status: status, Replayed: replayed, Body: view(body)}
		if status == 201 {
			ans.Location = "/api/orders/" + id
		}
		return ans
	}
	good := []Answer{
		{Client: a, Key: "k1", Copy: 0, Attempt: 1, Status: 0, Err: "timeout"},
		ok("k1", w1, 201, 1, 1, false),
		{Client: a, Key: "k1", Copy: 0, Attempt: 2, Status: 409, ProblemType: "#request-in-progress"},
		ok("k1", w1, 201, 0, 3, true),
		{Client: a, Key: "k2", Attempt: 1, Status: 500},
		ok("k2", w2, 201, 0, 2, true),
		{Client: a, Key: "k2", Attempt: 1, Status: 422, ProblemType: reused, Reuse: true},
		ok("k5", w2, 200, 0, 1, false),
		ok("k3", w3, 201, 0, 1, false),
		{Client: b, Key: "k4", OrderID: "W-3", Attempt: 1, Status: 409, ProblemType: taken, Body: `{"type":"` + taken + `"}`},
	}
	return &submitFixture{subs: subs, good: good, w1: w1, w2: w2, w3: w3, w3b: w3b, ok: ok}
}

// submitCase changes the answers or the documents of the good run; want
// names the check that must then fail ("" none).
type submitCase struct {
	name   string
	change func([]Answer) []Answer
	docs   func(map[string][]json.RawMessage)
	want   string
}

// check runs SubmitChecks over the fixture changed by tc.
func (f *submitFixture) check(t *testing.T, tc submitCase) {
	t.Helper()
	answers := append([]Answer(nil), f.good...)
	if tc.change != nil {
		answers = tc.change(answers)
	}
	docs := map[string][]json.RawMessage{}
	storedDocs(docs, orderstream.ClientA, f.w1)
	storedDocs(docs, orderstream.ClientA, f.w2)
	storedDocs(docs, orderstream.ClientA, f.w3)
	if tc.docs != nil {
		tc.docs(docs)
	}
	var failed []string
	for _, c := range SubmitChecks(f.subs, answers, docs) {
		if c.Checked == 0 && tc.change == nil {
			t.Errorf("check %q checked nothing", c.Name)
		}
		if len(c.Violations) > 0 {
			failed = append(failed, c.Name+": "+strings.Join(c.Violations, "; "))
		}
	}
	switch {
	case tc.want == "" && len(failed) > 0:
		t.Errorf("violations in a good run: %v", failed)
	case tc.want != "" && (len(failed) == 0 || !strings.Contains(strings.Join(failed, "\n"), tc.want)):
		t.Errorf("failed %v, want %q", failed, tc.want)
	}
}

func TestSubmitChecks(t *testing.T) {
	f := newSubmitFixture()
	ok, w2, w3b, b := f.ok, f.w2, f.w3b, orderstream.ClientB
	tests := []submitCase{
		{"a good run", nil, nil, ""},
		{"an answered order lost", nil, func(d map[string][]json.RawMessage) { d["order"] = d["order"][1:] }, "every 2xx answer's order stored"},
		{"an order stored twice", nil, func(d map[string][]json.RawMessage) { d["order"] = append(d["order"], d["order"][0]) }, "one per orderId"},
		{"an order without its event", nil, func(d map[string][]json.RawMessage) { d["outboxEvent"] = d["outboxEvent"][1:] }, "with its outbox event"},
		{"a copy never answered", func(a []Answer) []Answer { return a[1:3] }, nil, "every submission ends"},
		{"two executions", func(a []Answer) []Answer { a[3].Replayed = false; return a }, nil, "one execution per Idempotency-Key"},
		{"a replay with another body", func(a []Answer) []Answer { a[3].Body = `{"orderId":"other"}`; return a }, nil, "every replay identical"},
		{"a replay elsewhere", func(a []Answer) []Answer { a[3].Location = "/api/orders/x"; return a }, nil, "every replay identical"},
		{"the other payload accepted", func(a []Answer) []Answer { a[6] = ok("k2", w2, 201, 0, 1, false); a[6].Reuse = true; return a }, nil, "every key reused"},
		{"the new key created it again", func(a []Answer) []Answer { a[7].Status, a[7].Location = 201, "/api/orders/W-2"; return a }, nil, "2 keys answered 201"},
		{"an answer with another fingerprint", func(a []Answer) []Answer { a[7].Body = view(apiTestOrder("W-2", 7)); return a }, nil, "every 2xx answer's order stored"},
		{"an answer showing the owner", func(a []Answer) []Answer {
			a[7].Body = strings.Replace(a[7].Body, "{", `{"owner":"key:x",`, 1)
			return a
		}, nil, `shows "owner"`},
		{"both racers created", func(a []Answer) []Answer { a[9] = ok("k4", w3b, 201, 0, 1, false); a[9].Client = b; return a }, nil, "racing"},
		{"the loser's order stored", nil, func(d map[string][]json.RawMessage) {
			d["order"], d["outboxEvent"] = d["order"][:2], d["outboxEvent"][:2]
			storedDocs(d, b, w3b)
		}, "racing"},
		{"the loser told the fingerprints", func(a []Answer) []Answer { a[9].Body = `{"storedHash":"sha256:1"}`; return a }, nil, "shows fingerprints"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { f.check(t, tc) })
	}
}

// A client retries what is not final and stops at what is: 409
// order-id-taken is an answer, 409 in flight is not.
func TestClientRetriesOnlyWhatIsNotFinal(t *testing.T) {
	for _, tc := range []struct {
		a     Answer
		again bool
	}{
		{Answer{Status: 0, Err: "timeout"}, true},
		{Answer{Status: 500}, true},
		{Answer{Status: 503}, true},
		{Answer{Status: 409, ProblemType: "https://example.test#request-in-progress"}, true},
		{Answer{Status: 409, ProblemType: "https://example.test#order-id-taken"}, false},
		{Answer{Status: 409, ProblemType: "https://example.test#order-id-taken", Replayed: true}, false},
		{Answer{Status: 201}, false},
		{Answer{Status: 200}, false},
		{Answer{Status: 422}, false},
	} {
		if _, again := retryAfter(tc.a); again != tc.again {
			t.Errorf("%d %s: retried %v, want %v", tc.a.Status, tc.a.ProblemType, again, tc.again)
		}
	}
}

// The fall-back from the queue (docs/http-api.md, rule 1): the order the
// queue stored answers the client its receipt, and no key is answered 201;
// a 409 or a receipt for other content, or for an order the client owns,
// is a violation.
func TestSubmitChecksOfAFallBack(t *testing.T) {
	w := apiTestOrder("W-9", 1)
	hash := orderstream.ContentKey(w)
	sub := orderstream.Submission{Client: orderstream.ClientA, Key: "k9", OrderID: "W-9", Body: w, Copies: 1, Fallback: true}
	receipt := fmt.Sprintf(`{"hashVersion":1,"orderId":"W-9","requestHash":%q}`, hash)
	docs := func(owner string) map[string][]json.RawMessage {
		o := fmt.Sprintf(`{"id":"W-9","orderId":"W-9","type":"order","requestHash":%q,"owner":%q}`, hash, owner)
		e := fmt.Sprintf(`{"id":"W-9:event:OrderAccepted","orderId":"W-9","requestHash":%q}`, hash)
		return map[string][]json.RawMessage{"order": {json.RawMessage(o)}, "outboxEvent": {json.RawMessage(e)}}
	}
	for _, tc := range []struct {
		name  string
		owner string
		a     Answer
		want  string
	}{
		{"the queue's order, its receipt", "", Answer{Status: 200, Body: receipt}, ""},
		{"the queue's order, 409", "", Answer{Status: 409, ProblemType: "#order-id-taken"}, "has this content"},
		{"the client's own order, a receipt", ownerOf(orderstream.ClientA), Answer{Status: 200, Body: receipt}, "owns"},
		{"a receipt for other content", "", Answer{Status: 200, Body: strings.Replace(receipt, hash, "sha256:00", 1)}, "does not carry"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.a.Client, tc.a.Key, tc.a.OrderID, tc.a.Attempt = sub.Client, sub.Key, sub.OrderID, 1
			var failed []string
			for _, c := range SubmitChecks([]orderstream.Submission{sub}, []Answer{tc.a}, docs(tc.owner)) {
				failed = append(failed, c.Violations...)
			}
			got := strings.Join(failed, "; ")
			if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
				t.Errorf("violations %q, want %q", got, tc.want)
			}
		})
	}
}
