package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/ordersink/orders-consumer/handler"
	"github.com/ordersink/orders-consumer/handler/handlertest"
	"github.com/ordersink/orders-consumer/idempotency"
	"github.com/ordersink/orders-consumer/orders"
)

func TestSubmitOrderCreatesTheOrderInTheRequest(t *testing.T) {
	d := startAPI(t)
	id, body := handlertest.UniqueOrder(t)
	key := "7c9e6679-7425-40de-944b-e07fc1f90ae7-" + id

	a := d.submit(t, key, body)
	d.wantOrder(t, a, http.StatusCreated, id)
	if loc := a.Header.Get("Location"); loc != "/api/orders/"+url.PathEscape(id) {
		t.Errorf("Location %q", loc)
	}
	if a.Header.Get(headerReplayed) != "" {
		t.Errorf("a first answer says %s", headerReplayed)
	}
	// The order is stored as the queue path stores it, owned by the client
	// and naming the request that created it.
	wantWritten(t, id)
	var stored map[string]any
	if err := json.Unmarshal(d.storedOrder(t, id), &stored); err != nil {
		t.Fatal(err)
	}
	o, err := orders.ParseOrder(body)
	if err != nil {
		t.Fatal(err)
	}
	if stored["owner"] != "key:"+partnerA || stored["submissionId"] != keyID(key) || stored["requestHash"] != o.Hash ||
		stored["messageId"] != orders.MessageID(id, body) {
		t.Errorf("stored order %v", stored)
	}
	if !strings.Contains(a.Logs[0], "SubmitOrder: 201 created "+id) {
		t.Errorf("host log line %q", a.Logs[0])
	}
	// The key record keeps the answer, and no order id of its own.
	rec, err := d.keys.Read(context.Background(), keyID(key))
	if err != nil || rec.State != idempotency.Succeeded || rec.Response == nil || !bytes.Equal(rec.Response.Body, a.Body) {
		t.Errorf("key record %+v, %v", rec, err)
	}
	if doc, _ := d.keys.Document(context.Background(), keyID(key)); bytes.Contains(doc, []byte(`"orderId"`)) {
		t.Errorf("the key record names the order: %s", doc)
	}
}

func TestSubmitOrderReplaysTheStoredAnswer(t *testing.T) {
	d := startAPI(t)
	id, body := handlertest.UniqueOrder(t)
	key := "replay-" + id
	first := d.submit(t, key, body)
	d.wantOrder(t, first, http.StatusCreated, id)
	before := d.storedOrder(t, id)
	record, _ := d.keys.Document(context.Background(), keyID(key))

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
			if len(a.Outputs) != 1 {
				t.Errorf("a replay has outputs %v", a.Outputs)
			}
			if !strings.Contains(a.Logs[0], "201 replayed") || !strings.Contains(d.LogsOf(a.Answer), `"outcome":"replayed"`) {
				t.Errorf("logs %q / %s", a.Logs[0], d.LogsOf(a.Answer))
			}
		})
	}
	// Nothing was written: the order and the key record are as they were.
	wantWritten(t, id)
	if after := d.storedOrder(t, id); !bytes.Equal(after, before) {
		t.Errorf("the stored order changed:\n%s\n%s", before, after)
	}
	if after, _ := d.keys.Document(context.Background(), keyID(key)); !bytes.Equal(after, record) {
		t.Errorf("the key record changed:\n%s\n%s", record, after)
	}
}

func TestSubmitOrderSameKeyOtherPayloadIsRefused(t *testing.T) {
	d := startAPI(t)
	id, body := handlertest.UniqueOrder(t)
	key := "reuse-" + id
	d.wantOrder(t, d.submit(t, key, body), http.StatusCreated, id)
	for _, tc := range []struct {
		name  string
		other []byte
	}{
		{"another total", bytes.Replace(bytes.Replace(body, []byte(`"quantity":1`), []byte(`"quantity":2`), 1), []byte(`"44.98"`), []byte(`"49.98"`), 1)},
		{"another order", func() []byte { _, b := handlertest.UniqueOrder(t); return b }()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := wantProblem(t, d.submit(t, key, tc.other), http.StatusUnprocessableEntity, "idempotency-key-reused")
			if !strings.Contains(p.Detail, "another payload") {
				t.Errorf("detail %q", p.Detail)
			}
		})
	}
	// The same key from another client is another key.
	otherID, otherBody := handlertest.UniqueOrder(t)
	b := d.call(t, FunctionSubmitOrder, submitCall(key, otherBody).by(partnerB))
	if b.StatusCode != http.StatusCreated || b.Header.Get(headerReplayed) != "" {
		t.Errorf("another client's key: %d %s, want a first 201", b.StatusCode, b.Body)
	}
	wantWritten(t, otherID)
}

// A client that resends its order under a new key is told it has it: the
// stored order, 200, nothing written.
func TestSubmitOrderResendUnderANewKeyAnswersTheStoredOrder(t *testing.T) {
	d := startAPI(t)
	id, body := handlertest.UniqueOrder(t)
	first := d.submit(t, "k1-"+id, body)
	d.wantOrder(t, first, http.StatusCreated, id)
	before := d.storedOrder(t, id)

	second := d.submit(t, "k2-"+id, bytes.Replace(body, []byte(`"web-shop"`), []byte(`"retry-bot"`), 1))
	d.wantOrder(t, second, http.StatusOK, id)
	if !bytes.Equal(second.Body, first.Body) || second.Header.Get(headerReplayed) != "" || second.Header.Get("Location") != "" {
		t.Errorf("resend: %v %s, want the first answer's order, no replay, no Location", second.Header, second.Body)
	}
	if after := d.storedOrder(t, id); !bytes.Equal(after, before) {
		t.Errorf("the stored order changed:\n%s\n%s", before, after)
	}
	wantWritten(t, id)
	if !strings.Contains(d.LogsOf(second.Answer), `"outcome":"resent"`) {
		t.Errorf("log %s", d.LogsOf(second.Answer))
	}
}

// An orderId that holds other content (this client's, another client's or
// the queue path's order) is refused: nothing written, nothing parked, and
// the hashes only for the order's owner. The same content is no conflict
// (TestOneOrderPerRealWorldOrder).
func TestSubmitOrderOrderIDTaken(t *testing.T) {
	d := startAPI(t)
	id, body := handlertest.UniqueOrder(t)
	created := d.submit(t, "first-"+id, body)
	d.wantOrder(t, created, http.StatusCreated, id)
	before := d.storedOrder(t, id)
	otherContent := bytes.Replace(body, []byte(`"CUST-42"`), []byte(`"CUST-43"`), 1)
	o, _ := orders.ParseOrder(body)
	other, _ := orders.ParseOrder(otherContent)

	// The owner, with other content: both hashes.
	mine := d.submit(t, "other-content-"+id, otherContent)
	p := wantProblem(t, mine, http.StatusConflict, "order-id-taken")
	if p.StoredHash != o.Hash || p.RequestHash != other.Hash {
		t.Errorf("owner's 409 %+v, want storedHash %s and requestHash %s", p, o.Hash, other.Hash)
	}
	// Another client: that the id is taken, nothing else.
	theirs := d.call(t, FunctionSubmitOrder, submitCall("theirs-"+id, otherContent).by(partnerB))
	p = wantProblem(t, theirs, http.StatusConflict, "order-id-taken")
	for _, leak := range []string{o.Hash, other.Hash, partnerA, "storedHash", "requestHash", "owner"} {
		if strings.Contains(string(theirs.Body), leak) {
			t.Errorf("another client's 409 shows %q: %s", leak, theirs.Body)
		}
	}

	// The 409 is the key's answer: replayed as such.
	again := d.submit(t, "other-content-"+id, otherContent)
	if again.StatusCode != http.StatusConflict || !bytes.Equal(again.Body, mine.Body) || again.Header.Get(headerReplayed) != "true" {
		t.Errorf("retry of the 409: %d %v %s", again.StatusCode, again.Header, again.Body)
	}
	if after := d.storedOrder(t, id); !bytes.Equal(after, before) {
		t.Errorf("the stored order changed:\n%s\n%s", before, after)
	}
	wantWritten(t, id)

	// An order of the queue path belongs to no client of the API.
	qid, qbody := handlertest.UniqueOrder(t)
	if r := d.Invoke(t, handler.FunctionProcessOrder, hostInvocation(qbody, qid, 1)); !strings.Contains(r.Logs[0], "created "+qid) {
		t.Fatalf("ProcessOrder: %q", r.Logs[0])
	}
	q := d.submit(t, "queued-"+qid, bytes.Replace(qbody, []byte(`"CUST-42"`), []byte(`"CUST-43"`), 1))
	p = wantProblem(t, q, http.StatusConflict, "order-id-taken")
	if p.StoredHash != "" || p.RequestHash != "" {
		t.Errorf("a queued order's 409 shows hashes: %s", q.Body)
	}
	wantWritten(t, qid)
}

// The invariant of issue 20: one order however the requests of one key
// interleave, every 2xx the same answer, and nothing else written.
func TestSubmitOrderConcurrentSameKey(t *testing.T) {
	const n = 32
	d := startAPI(t)
	id, body := handlertest.UniqueOrder(t)
	key := "concurrent-" + id
	answers := concurrently(t, d, n, func(int) httpCall { return submitCall(key, body) })
	var executed, replayed, inFlight int
	var first []byte
	for _, a := range answers {
		switch {
		case a.StatusCode == http.StatusCreated && a.Header.Get(headerReplayed) == "":
			executed++
		case a.StatusCode == http.StatusCreated:
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
			t.Errorf("201 bodies differ: %s / %s", first, a.Body)
		}
	}
	t.Logf("%d executed, %d replayed, %d in flight", executed, replayed, inFlight)
	if executed != 1 || replayed+inFlight != n-1 {
		t.Fatalf("%d executed, %d replayed, %d in flight; want exactly one executed", executed, replayed, inFlight)
	}
	wantWritten(t, id)
	rec, err := d.keys.Read(context.Background(), keyID(key))
	if err != nil || rec.State != idempotency.Succeeded || !bytes.Equal(rec.Response.Body, first) {
		t.Errorf("key record %+v, %v", rec, err)
	}
}

// Two clients racing for one orderId with different content: exactly one
// 201 and one 409, and the stored order is the winner's.
func TestSubmitOrderTwoClientsRaceForOneOrderID(t *testing.T) {
	d := startAPI(t)
	for round := range 8 {
		id, body := handlertest.UniqueOrder(t)
		bodies := [2][]byte{body, bytes.Replace(body, []byte(`"CUST-42"`), []byte(`"CUST-43"`), 1)}
		clients := [2]string{partnerA, partnerB}
		answers := concurrently(t, d, 2, func(i int) httpCall {
			return submitCall("race-"+id, bodies[i]).by(clients[i])
		})
		winner := -1
		for i, a := range answers {
			switch a.StatusCode {
			case http.StatusCreated:
				if winner >= 0 {
					t.Fatalf("round %d: two 201s", round)
				}
				winner = i
			case http.StatusConflict:
				wantProblem(t, a, http.StatusConflict, "order-id-taken")
			default:
				t.Fatalf("round %d: answer %d %s", round, a.StatusCode, a.Body)
			}
		}
		if winner < 0 {
			t.Fatalf("round %d: no 201: %d %s / %d %s", round, answers[0].StatusCode, answers[0].Body, answers[1].StatusCode, answers[1].Body)
		}
		var stored struct{ Owner, CustomerID, RequestHash string }
		if err := json.Unmarshal(d.storedOrder(t, id), &stored); err != nil {
			t.Fatal(err)
		}
		o, err := orders.ParseOrder(bodies[winner])
		if err != nil {
			t.Fatal(err)
		}
		if stored.Owner != "key:"+clients[winner] || stored.RequestHash != o.Hash {
			t.Errorf("round %d: stored %+v, want the winner's (%s, %s)", round, stored, clients[winner], o.Hash)
		}
		d.wantOrder(t, answers[winner], http.StatusCreated, id)
		wantWritten(t, id)
	}
}

// concurrently sends n calls at once and returns their answers in order.
func concurrently(t *testing.T, d *api, n int, call func(i int) httpCall) []callerAnswer {
	t.Helper()
	answers := make([]callerAnswer, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		request := hostHTTPInvocation(FunctionSubmitOrder, call(i))
		wg.Go(func() {
			raw, err := d.Call(FunctionSubmitOrder, request)
			if err == nil {
				answers[i], err = decodeCallerAnswer(raw)
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
	}
	return answers
}

func TestSubmitOrderLogsOneLinePerRequest(t *testing.T) {
	d := startAPI(t)
	id, body := handlertest.UniqueOrder(t)
	key := "log-line-key-" + id
	a := d.submit(t, key, body)
	line := d.LogsOf(a.Answer)
	if strings.Count(line, "\n") != 0 || line == "" {
		t.Fatalf("want one line, got %q", line)
	}
	var l map[string]any
	if err := json.Unmarshal([]byte(line), &l); err != nil {
		t.Fatal(err)
	}
	if l["msg"] != "invocation" || l["function"] != FunctionSubmitOrder || l["outcome"] != "created" || l["httpStatus"] != float64(201) ||
		l["orderId"] != id || l["keyHash"] != keyID(key) || l["clientHash"] != shortSHA256("key:"+partnerA) || l["durationMs"] == nil {
		t.Errorf("log line %v", l)
	}
	if !testing.Short() && l["requestCharge"] == nil {
		t.Errorf("no requestCharge on Cosmos DB: %v", l)
	}
	wantProblem(t, d.submit(t, key+"-malformed", []byte(`{"orderId":`)), http.StatusBadRequest, "malformed-order")
	for _, secret := range []string{key, partnerKey} {
		if strings.Contains(d.Logs.String(), secret) {
			t.Errorf("the log shows %q", secret)
		}
	}
}

// Cosmos DB gives a document back reprinted (numbers in their shortest form,
// escapes decoded): the 201 built from the order as written, the 200 of a
// resend and a GET built from the stored one are still the same bytes.
func TestSubmitOrderAnswersOneViewWhateverTheStoreReprints(t *testing.T) {
	d := startAPI(t)
	id, body := handlertest.UniqueOrder(t)
	body = bytes.Replace(body, []byte(`"producer":"web-shop"`), []byte(`"producer":"caf\u00e9 \u2028 <&>","n":1.50,"e":1E2,"z":-0`), 1)
	created := d.submit(t, "k1-"+id, body)
	d.wantOrder(t, created, http.StatusCreated, id)
	for name, a := range map[string]callerAnswer{"resend": d.submit(t, "k2-"+id, body), "GET": d.get(t, getCall(id))} {
		if a.StatusCode != http.StatusOK || !bytes.Equal(a.Body, created.Body) {
			t.Errorf("%s: %d %s\nthe 201 was %s", name, a.StatusCode, a.Body, created.Body)
		}
	}
}
