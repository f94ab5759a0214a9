package handler

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/ordersink/orders-consumer/idempotency"
	"github.com/ordersink/orders-consumer/orders"
)

func TestSubmitOrderAcceptsAndSendsTheOrderOnce(t *testing.T) {
	d := startFrontDoor(t)
	id, body := uniqueOrder(t)
	key := "7c9e6679-7425-40de-944b-e07fc1f90ae7-" + id

	a := d.submit(t, key, body)
	if a.StatusCode != http.StatusAccepted {
		t.Fatalf("status %d, want 202; body %s", a.StatusCode, a.Body)
	}
	if loc := a.Header.Get("Location"); loc != "/api/orders/"+url.PathEscape(id) {
		t.Errorf("Location %q", loc)
	}
	if ct := a.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q", ct)
	}
	if a.Header.Get(headerReplayed) != "" {
		t.Errorf("a first answer says %s", headerReplayed)
	}
	var got submitAnswer
	if err := json.Unmarshal(a.Body, &got); err != nil {
		t.Fatal(err)
	}
	messageID := orders.MessageID(id, body)
	if got != (submitAnswer{OrderID: id, MessageID: messageID, Status: "submitted"}) {
		t.Errorf("body %+v", got)
	}

	// The order output is the given-back envelope of docs/contract.md §7:
	// the body byte for byte, the producer's MessageId, no deliveries yet,
	// and a reason naming the function and the key's record, not the key.
	q := sentOrder(t, a)
	if q == nil {
		t.Fatal("no order output")
	}
	scopeID := idempotency.Scope{Client: "key:" + shortSHA256(partnerKey), Operation: FunctionSubmitOrder, Key: key}.ID()
	if q.Body != string(body) || q.MessageID != messageID || q.Deliveries != 0 || q.InvocationID != a.InvocationID ||
		!strings.Contains(q.Reason, FunctionSubmitOrder) || !strings.Contains(q.Reason, scopeID) || strings.Contains(q.Reason, key) {
		t.Errorf("order output %+v", q)
	}
	if !strings.Contains(a.Logs[0], "SubmitOrder: 202 accepted "+id) {
		t.Errorf("host log line %q", a.Logs[0])
	}

	// The consumer reads the output as the order itself.
	p := d.deliver(t, a)
	if !strings.Contains(p.Logs[0], "created "+id) {
		t.Errorf("ProcessOrder: %q, want created", p.Logs[0])
	}
	stored := documentsOfType(partition(t, id), orders.TypeOrder)
	if len(stored) != 1 || stored[0]["messageId"] != messageID {
		t.Errorf("stored orders %v, want one with messageId %s", stored, messageID)
	}
}

func TestSubmitOrderReplaysTheStoredAnswer(t *testing.T) {
	d := startFrontDoor(t)
	id, body := uniqueOrder(t)
	key := "replay-" + id
	first := d.submit(t, key, body)
	if first.StatusCode != http.StatusAccepted {
		t.Fatalf("first: %d %s", first.StatusCode, first.Body)
	}

	for _, tc := range []struct {
		name string
		key  string
		body []byte
	}{
		{"same key and bytes", key, body},
		{"the key as an RFC 8941 string", `"` + key + `"`, body},
		// The fingerprint is the order's (docs/contract.md §4): meta and
		// white space are not part of it.
		{"other meta and spacing", key, bytes.Replace(body, []byte(`"producer":"web-shop"`), []byte(`"producer": "retry-bot"`), 1)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := d.submit(t, tc.key, tc.body)
			if a.StatusCode != first.StatusCode || !bytes.Equal(a.Body, first.Body) {
				t.Fatalf("replay %d %s, want %d %s", a.StatusCode, a.Body, first.StatusCode, first.Body)
			}
			if a.Header.Get(headerReplayed) != "true" {
				t.Errorf("%s = %q, want true", headerReplayed, a.Header.Get(headerReplayed))
			}
			for _, h := range []string{"Location", "Content-Type"} {
				if a.Header.Get(h) != first.Header.Get(h) {
					t.Errorf("%s %q, first answer had %q", h, a.Header.Get(h), first.Header.Get(h))
				}
			}
			if len(a.Header) != len(first.Header)+1 {
				t.Errorf("headers %s, first answer %s", a.headerNames(), first.headerNames())
			}
			// The replay sends the order again, built from this request:
			// the first send may have failed after the key was completed.
			q := sentOrder(t, a)
			if q == nil || q.Body != string(tc.body) || q.MessageID != orders.MessageID(id, tc.body) {
				t.Fatalf("replay's order output %+v", q)
			}
			if !strings.Contains(a.Logs[0], "202 replayed") || !strings.Contains(d.logsOf(a.answer), `"outcome":"replayed"`) {
				t.Errorf("logs %q / %s", a.Logs[0], d.logsOf(a.answer))
			}
		})
	}

	// Every copy reaches the consumer; one order results.
	d.deliver(t, first)
	again := d.submit(t, key, body)
	d.wantDuplicateOfOne(t, "the replay's copy", again, id)
}

func TestSubmitOrderSameKeyOtherPayloadIsRefused(t *testing.T) {
	d := startFrontDoor(t)
	id, body := uniqueOrder(t)
	key := "reuse-" + id
	if a := d.submit(t, key, body); a.StatusCode != http.StatusAccepted {
		t.Fatalf("first: %d %s", a.StatusCode, a.Body)
	}
	for _, tc := range []struct {
		name  string
		other []byte
	}{
		{"another total", bytes.Replace(bytes.Replace(body, []byte(`"quantity":1`), []byte(`"quantity":2`), 1), []byte(`"44.98"`), []byte(`"49.98"`), 1)},
		{"another order", func() []byte { _, b := uniqueOrder(t); return b }()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := d.submit(t, key, tc.other)
			p := wantProblem(t, a, http.StatusUnprocessableEntity, "idempotency-key-reused")
			if !strings.Contains(p.Detail, "another payload") {
				t.Errorf("detail %q", p.Detail)
			}
		})
	}
	// The same key from another client is another key.
	other := submitCall(key, bytes.Replace(body, []byte(`"CUST-42"`), []byte(`"CUST-43"`), 1))
	other.header.Set("X-Functions-Key", "partner-b-function-key")
	if a := d.call(t, FunctionSubmitOrder, other); a.StatusCode != http.StatusAccepted || a.Header.Get(headerReplayed) != "" {
		t.Errorf("another client's key: %d %s, want a first 202", a.StatusCode, a.Body)
	}
}

func TestSubmitOrderSameOrderUnderANewKeyIsADuplicateForTheConsumer(t *testing.T) {
	d := startFrontDoor(t)
	id, body := uniqueOrder(t)
	first, second := d.submit(t, "k1-"+id, body), d.submit(t, "k2-"+id, body)
	for _, a := range []callerAnswer{first, second} {
		if a.StatusCode != http.StatusAccepted || a.Header.Get(headerReplayed) != "" {
			t.Fatalf("%d %s %s, want a first 202 for each key", a.StatusCode, a.headerNames(), a.Body)
		}
	}
	if p := d.deliver(t, first); !strings.Contains(p.Logs[0], "created "+id) {
		t.Errorf("first copy: %q", p.Logs[0])
	}
	d.wantDuplicateOfOne(t, "second copy", second, id)
}

func TestSubmitOrderLogsOneLinePerRequest(t *testing.T) {
	d := startFrontDoor(t)
	id, body := uniqueOrder(t)
	key := "log-line-key-" + id
	a := d.submit(t, key, body)
	line := d.logsOf(a.answer)
	if strings.Count(line, "\n") != 0 || line == "" {
		t.Fatalf("want one line, got %q", line)
	}
	var l map[string]any
	if err := json.Unmarshal([]byte(line), &l); err != nil {
		t.Fatal(err)
	}
	scopeID := idempotency.Scope{Client: "key:" + shortSHA256(partnerKey), Operation: FunctionSubmitOrder, Key: key}.ID()
	if l["msg"] != "invocation" || l["function"] != FunctionSubmitOrder || l["outcome"] != "accepted" || l["httpStatus"] != float64(202) ||
		l["orderId"] != id || l["keyHash"] != scopeID || l["clientHash"] != shortSHA256("key:"+shortSHA256(partnerKey)) || l["durationMs"] == nil {
		t.Errorf("log line %v", l)
	}
	if !testing.Short() && l["requestCharge"] == nil {
		t.Errorf("no requestCharge on Cosmos DB: %v", l)
	}
	wantProblem(t, d.submit(t, key, []byte(`{"orderId":`)), http.StatusBadRequest, "malformed-order")
	for _, secret := range []string{key, partnerKey} {
		if strings.Contains(d.logs.String(), secret) {
			t.Errorf("the log shows %q", secret)
		}
	}
}

// The invariant of issue 14: one order however the requests interleave.
func TestSubmitOrderConcurrentSameKey(t *testing.T) {
	const n = 32
	d := startFrontDoor(t)
	id, body := uniqueOrder(t)
	key := "concurrent-" + id
	answers := make([]callerAnswer, n)
	errs := make(chan error, n)
	done := make(chan int, n)
	for i := range n {
		go func() {
			raw, err := d.testServer.call(FunctionSubmitOrder, hostHTTPInvocation(FunctionSubmitOrder, submitCall(key, body)))
			if err != nil {
				errs <- err
				return
			}
			if answers[i], err = decodeCallerAnswer(raw); err != nil {
				errs <- err
				return
			}
			done <- i
		}()
	}
	for range n {
		select {
		case err := <-errs:
			t.Fatal(err)
		case <-done:
		}
	}
	var executed, replayed, inFlight int
	var first []byte
	for _, a := range answers {
		switch {
		case a.StatusCode == http.StatusAccepted && a.Header.Get(headerReplayed) == "":
			executed++
		case a.StatusCode == http.StatusAccepted:
			replayed++
		case a.StatusCode == http.StatusConflict && a.Header.Get("Retry-After") != "":
			inFlight++
			continue
		default:
			t.Fatalf("answer %d %s", a.StatusCode, a.Body)
		}
		if first == nil {
			first = a.Body
		} else if !bytes.Equal(first, a.Body) {
			t.Errorf("202 bodies differ: %s / %s", first, a.Body)
		}
	}
	t.Logf("%d executed, %d replayed, %d in flight", executed, replayed, inFlight)
	if executed != 1 || replayed+inFlight != n-1 {
		t.Fatalf("%d executed, %d replayed, %d in flight; want exactly one executed", executed, replayed, inFlight)
	}
	created := 0
	for _, a := range answers {
		if a.StatusCode == http.StatusAccepted && strings.Contains(d.deliver(t, a).Logs[0], "created") {
			created++
		}
	}
	if created != 1 || len(documentsOfType(partition(t, id), orders.TypeOrder)) != 1 {
		t.Errorf("%d deliveries created the order; want one order", created)
	}
}

// wantDuplicateOfOne delivers the copy a sent, which the consumer must take
// for a duplicate of order id, and checks that one order id is stored.
func (d *frontDoor) wantDuplicateOfOne(t *testing.T, what string, a callerAnswer, id string) {
	t.Helper()
	if p := d.deliver(t, a); !strings.Contains(p.Logs[0], "duplicate "+id) {
		t.Errorf("%s: %q, want a duplicate", what, p.Logs[0])
	}
	if n := len(documentsOfType(partition(t, id), orders.TypeOrder)); n != 1 {
		t.Errorf("%d orders stored, want 1", n)
	}
}
