package httpapi

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ordersink/orders-consumer/handler"
	"github.com/ordersink/orders-consumer/handler/handlertest"
	"github.com/ordersink/orders-consumer/idempotency"
	"github.com/ordersink/orders-consumer/orders"
	"github.com/ordersink/orders-consumer/orders/orderstest"
)

// Requests that are not submissions are refused before anything is claimed
// or written: without a length, a key or a body, or over the size that bounds
// what fingerprinting a body costs, a request has nothing to be judged by.
func TestSubmitOrderRefusesBadRequestsBeforeClaimingTheKey(t *testing.T) {
	d := startAPI(t)
	id, body := handlertest.UniqueOrder(t)
	key := "k-" + id
	for _, tc := range []struct {
		name   string
		call   httpCall
		status int
		anchor string
		detail string
	}{
		{"chunked: no Content-Length", func() httpCall { c := submitCall(key, body); c.chunked = true; return c }(), 411, "length-required", "Content-Length"},
		{"no key", submitCall("", body), 400, "idempotency-key-missing", "Idempotency-Key"},
		{"key too long", submitCall(strings.Repeat("k", 256), body), 400, "idempotency-key-malformed", "at most 255"},
		{"key with a space", submitCall("my key", body), 400, "idempotency-key-malformed", "visible ASCII"},
		{"key not ASCII", submitCall("schlüssel", body), 400, "idempotency-key-malformed", "visible ASCII"},
		{"empty quoted key", submitCall(`""`, body), 400, "idempotency-key-malformed", "empty"},
		{"bad sf-string", submitCall(`"a\x"`, body), 400, "idempotency-key-malformed", "escape"},
		{"Content-Length: 0", submitCall(key, nil), 400, "body-missing", "JSON object"},
		{"over the submit limit", submitCall(key, orderOfSize(t, id, MaxSubmitBytes+1)), 413, "order-too-large", "at most 1048576"},
		{"the platform's default key", submitCall(key, body).by("default"), 403, "shared-function-key", `"default"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := d.call(t, FunctionSubmitOrder, tc.call)
			p := wantProblem(t, a, tc.status, tc.anchor)
			if !strings.Contains(p.Detail, tc.detail) {
				t.Errorf("detail %q does not mention %q", p.Detail, tc.detail)
			}
			if p.Instance != ordersPath {
				t.Errorf("instance %q, want %s", p.Instance, ordersPath)
			}
			// A refusal the client must fix is not worth a retry.
			if ra := a.Header.Get("Retry-After"); ra != "" {
				t.Errorf("Retry-After %q on a refusal", ra)
			}
		})
	}
	d.wantNoKey(t, key)
	if docs := partition(t, id); len(docs) != 0 {
		t.Errorf("refusals wrote %v", docs)
	}
	// The key stays free for the corrected request.
	d.wantOrder(t, d.submit(t, key, body), http.StatusCreated, id)
}

// A body the rules refuse is judged inside its key's work: the refusal is the
// key's first answer, stored and replayed byte for byte to a retry of the
// same key and payload, and the key stays bound to that payload: the
// corrected order goes under a new key (docs/http-api.md, rule 3).
func TestSubmitOrderRefusesABadBodyOnceForItsKey(t *testing.T) {
	d := startAPI(t, func(c *config) { c.MaxMessageBytes = 64 << 10 })
	id, body := handlertest.UniqueOrder(t)
	for _, tc := range []struct {
		name   string
		body   []byte
		status int
		anchor string
		detail string
	}{
		{"not JSON", []byte(`{"orderId":`), 400, "malformed-order", "not an order document"},
		{"duplicate member", []byte(`{"orderId":"a","orderId":"b"}`), 400, "malformed-order", "not an order document"},
		{"rule broken", bytes.Replace(body, []byte(`"EUR"`), []byte(`"euro"`), 1), 422, "invalid-order", "currency"},
		{"total wrong", bytes.Replace(body, []byte(`"44.98"`), []byte(`"44.99"`), 1), 422, "invalid-order", "total"},
		{"owner in the body", bytes.Replace(body, []byte(`"total"`), []byte(`"owner":"key:partner-b","total"`), 1), 422, "invalid-order", "owner"},
		// The queue path's rule of docs/contract.md §3 "event size": the
		// host indents each array element on a line of its own.
		{"event too large", handlertest.OrderWithArray(id, 9000), 422, "invalid-order", "OrderAccepted event"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			key := "bad-" + strings.ReplaceAll(tc.name, " ", "-") + "-" + id
			a := d.submit(t, key, tc.body)
			p := wantProblem(t, a, tc.status, tc.anchor)
			if !strings.Contains(p.Detail, tc.detail) {
				t.Errorf("detail %q does not mention %q", p.Detail, tc.detail)
			}
			if tc.anchor == "invalid-order" && tc.detail != "OrderAccepted event" && p.Field != tc.detail {
				t.Errorf("422 names field %q, want %q", p.Field, tc.detail)
			}
			if ra := a.Header.Get("Retry-After"); ra != "" {
				t.Errorf("Retry-After %q on a refusal", ra)
			}
			again := d.submit(t, key, tc.body)
			if again.StatusCode != a.StatusCode || !bytes.Equal(again.Body, a.Body) || again.Header.Get(headerReplayed) != "true" {
				t.Errorf("retry: %d %s (%s %q); want the first answer replayed: %d %s", again.StatusCode, again.Body,
					headerReplayed, again.Header.Get(headerReplayed), a.StatusCode, a.Body)
			}
			wantProblem(t, d.submit(t, key, body), http.StatusUnprocessableEntity, "idempotency-key-reused")
		})
	}
	if docs := partition(t, id); len(docs) != 0 {
		t.Errorf("refusals wrote %v", docs)
	}
	d.wantOrder(t, d.submit(t, "good-"+id, body), http.StatusCreated, id)
}

// orderOfSize is an order of exactly n bytes, padded in meta (which
// neither the fingerprint nor the OrderAccepted event carries) with strings
// below the contract's string length limit.
func orderOfSize(t *testing.T, id string, n int) []byte {
	t.Helper()
	body := orderstest.ExampleBodyWithID(id)
	var pad []string
	size := len(body) + len(`,"pad":[]`)
	for size < n {
		s := min(orders.MaxTokenBytes-1, n-size-len(`"",`))
		if s < 0 {
			// Too little room for another string: lengthen the previous one.
			pad[len(pad)-1] += strings.Repeat("p", n-size)
			size = n
			break
		}
		pad = append(pad, strings.Repeat("p", s))
		size += s + len(`""`)
		if len(pad) > 1 {
			size++ // the comma
		}
	}
	padding, _ := json.Marshal(pad)
	out := bytes.Replace(body, []byte(`"producer":"web-shop"`), []byte(`"producer":"web-shop","pad":`+string(padding)), 1)
	if len(out) != n {
		t.Fatalf("built an order of %d bytes, want %d", len(out), n)
	}
	return out
}

// The limit is inclusive: an order of exactly MaxSubmitBytes is stored, and
// its 201 answered and kept in its key record (each within Cosmos DB's
// document limit).
func TestSubmitOrderAtTheSizeLimit(t *testing.T) {
	d := startAPI(t)
	id, _ := handlertest.UniqueOrder(t)
	body := orderOfSize(t, id, MaxSubmitBytes)
	a := d.submit(t, "at-the-limit-"+id, body)
	d.wantOrder(t, a, http.StatusCreated, id)
	// The emulators do not enforce Cosmos DB's 2 MB per document: measure.
	const cosmosDocumentLimit = 2 << 20
	record, err := d.keys.Document(t.Context(), keyID("at-the-limit-"+id))
	if err != nil || len(record) == 0 {
		t.Fatalf("key record: %v", err)
	}
	for name, size := range map[string]int{"order document": len(d.storedOrder(t, id)), "key record with the 201": len(record)} {
		t.Logf("%s: %d bytes", name, size)
		if size > cosmosDocumentLimit-64<<10 {
			t.Errorf("the %s of an order at the limit is %d bytes, too close to Cosmos DB's %d", name, size, cosmosDocumentLimit)
		}
	}
	if again := d.submit(t, "at-the-limit-"+id, body); !bytes.Equal(again.Body, a.Body) || again.Header.Get(headerReplayed) != "true" {
		t.Errorf("replay at the limit: %d, %d bytes", again.StatusCode, len(again.Body))
	}
	wantProblem(t, d.submit(t, "over-the-limit-"+id, orderOfSize(t, id, MaxSubmitBytes+1)), http.StatusRequestEntityTooLarge, "order-too-large")
}

// Issue 24, item 3: a key of 255 characters is a key, 256 are refused.
func TestSubmitOrderKeyLengthBoundary(t *testing.T) {
	d := startAPI(t)
	id, body := handlertest.UniqueOrder(t)
	longest := (id + strings.Repeat("k", 255))[:255]
	if len(longest) != maxIdempotencyKeyLength {
		t.Fatalf("key of %d characters", len(longest))
	}
	d.wantOrder(t, d.submit(t, longest, body), http.StatusCreated, id)
	if r, err := d.keys.Read(t.Context(), keyID(longest)); err != nil || r.Key != longest {
		t.Errorf("key record of the 255-character key: %+v, %v", r, err)
	}
	p := wantProblem(t, d.submit(t, longest+"k", body), http.StatusBadRequest, "idempotency-key-malformed")
	if !strings.Contains(p.Detail, "256 characters") {
		t.Errorf("detail %q", p.Detail)
	}
	d.wantNoKey(t, longest+"k")
}

func TestSubmitOrderKeyHeaderTwiceIsRefused(t *testing.T) {
	d := startAPI(t)
	_, body := handlertest.UniqueOrder(t)
	c := submitCall("a", body)
	c.header[headerIdempotencyKey] = []string{"a", "b"}
	wantProblem(t, d.call(t, FunctionSubmitOrder, c), http.StatusBadRequest, "idempotency-key-malformed")
}

func TestSubmitOrderReadsEveryHostSpelling(t *testing.T) {
	d := startAPI(t)
	for _, tc := range []struct {
		name  string
		build func(c httpCall) []byte
	}{
		{"header names in lower case (HTTP/2)", func(c httpCall) []byte {
			lower := http.Header{}
			for k, v := range c.header {
				lower[strings.ToLower(k)] = v
			}
			c.header = lower
			return hostHTTPInvocation(FunctionSubmitOrder, c)
		}},
		{"Data.req double-encoded", func(c httpCall) []byte {
			var inv map[string]map[string]json.RawMessage
			_ = json.Unmarshal(hostHTTPInvocation(FunctionSubmitOrder, c), &inv)
			s, _ := json.Marshal(string(inv["Data"][handler.HTTPTriggerBinding]))
			inv["Data"][handler.HTTPTriggerBinding] = s
			b, _ := json.Marshal(inv)
			return b
		}},
		{"octet-stream body as base64", func(c httpCall) []byte {
			c.header.Set("Content-Type", "application/octet-stream")
			return hostHTTPInvocation(FunctionSubmitOrder, c)
		}},
		{"a principal header, without Easy Auth in front", func(c httpCall) []byte {
			c.header.Set("X-Ms-Client-Principal-Id", "another-partner")
			return hostHTTPInvocation(FunctionSubmitOrder, c)
		}},
		{"the function key in the query", func(c httpCall) []byte {
			c.header.Del("X-Functions-Key")
			c.target += "?code=" + partnerKey
			return hostHTTPInvocation(FunctionSubmitOrder, c)
		}},
		{"another key value of the same name (rotated)", func(c httpCall) []byte {
			c.header.Set("X-Functions-Key", "partner-a-rotated-key-value")
			return hostHTTPInvocation(FunctionSubmitOrder, c)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id, body := handlertest.UniqueOrder(t)
			a := respondedTo(t, d.Invoke(t, FunctionSubmitOrder, tc.build(submitCall("k-"+id, body))))
			d.wantOrder(t, a, http.StatusCreated, id)
			// Every spelling names the same client: the key's name.
			if r, err := d.keys.Read(t.Context(), keyID("k-"+id)); err != nil || r.State != idempotency.Succeeded || r.Client != "key:"+partnerA {
				t.Errorf("key record under key:%s: %+v, %v", partnerA, r, err)
			}
		})
	}
}

func TestSubmitOrderHostEnvelopeProblems(t *testing.T) {
	d := startAPI(t)
	_, body := handlertest.UniqueOrder(t)
	t.Run("no req binding", func(t *testing.T) {
		a := respondedTo(t, d.Invoke(t, FunctionSubmitOrder, []byte(`{"Data":{"request":{}},"Metadata":{}}`)))
		wantProblem(t, a, http.StatusInternalServerError, "internal-error")
		if a.Header.Get("Retry-After") == "" {
			t.Error("a 500 without Retry-After")
		}
		if !strings.Contains(d.LogsOf(a.Answer), `"level":"ERROR"`) {
			t.Errorf("not logged at ERROR: %s", d.LogsOf(a.Answer))
		}
	})
	t.Run("Identities the handler cannot read", func(t *testing.T) {
		inv := bytes.Replace(hostHTTPInvocation(FunctionSubmitOrder, submitCall("k", body)), []byte(`"Identities":[`), []byte(`"Identities":{"x":[`), 1)
		inv = bytes.Replace(inv, []byte(`role"}]`), []byte(`role"}]}`), 1)
		wantProblem(t, respondedTo(t, d.Invoke(t, FunctionSubmitOrder, inv)), http.StatusInternalServerError, "internal-error")
	})
	t.Run("invocation over its limit", func(t *testing.T) {
		huge := bytes.Replace(body, []byte(`"sku":"SKU-1"`), []byte(`"sku":"SKU-1","note":"`+strings.Repeat("x", maxHTTPInvocationBytes)+`"`), 1)
		a := respondedTo(t, d.Invoke(t, FunctionSubmitOrder, hostHTTPInvocation(FunctionSubmitOrder, submitCall("k", huge))))
		p := wantProblem(t, a, http.StatusRequestEntityTooLarge, "order-too-large")
		if !strings.Contains(p.Detail, "at most 1048576 bytes") {
			t.Errorf("detail %q does not give the limit of an order", p.Detail)
		}
	})
}

// An orderId the rules refuse is still named in the log line and the
// host's Logs, but cut: a caller's request may hold most of a megabyte of
// it, and every byte would be written twice per request.
func TestSubmitOrderLogsARefusedOrderIDCut(t *testing.T) {
	d := startAPI(t)
	_, body := handlertest.UniqueOrder(t)
	long := strings.Repeat("O", MaxSubmitBytes/2)
	body = []byte(`{"orderId":"` + long + `"` + string(body[bytes.IndexByte(body, ','):]))
	a := d.submit(t, "long-order-id", body)
	wantProblem(t, a, http.StatusBadRequest, "malformed-order")
	line := d.LogsOf(a.Answer)
	for name, got := range map[string]int{"log line": len(line), "host Logs": len(strings.Join(a.Logs, ""))} {
		if got > 4<<10 {
			t.Errorf("the %s is %d bytes for a %d-byte orderId", name, got, len(long))
		}
	}
	if !strings.Contains(line, strings.Repeat("O", 100)) {
		t.Errorf("the log line does not name the orderId's start: %.300s", line)
	}
}

// The exchange's log line (docs/contract.md §12) says what the answer was
// and cost: a refusal its description, a request that reached no store no
// requestCharge, and durationMs the request's time in milliseconds.
func TestSubmitOrderLogLineOfARefusal(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	var calls atomic.Int32
	d := startAPI(t, func(c *config) {
		c.Now = func() time.Time { // the request takes 1.5 ms
			if calls.Add(1) == 1 {
				return t0
			}
			return t0.Add(1500 * time.Microsecond)
		}
	})
	_, body := handlertest.UniqueOrder(t)
	a := d.submit(t, "", body)
	wantProblem(t, a, http.StatusBadRequest, "idempotency-key-missing")
	var line map[string]any
	if err := json.Unmarshal([]byte(d.LogsOf(a.Answer)), &line); err != nil {
		t.Fatalf("log line: %v", err)
	}
	if d, _ := line["description"].(string); !strings.Contains(d, "Idempotency-Key") {
		t.Errorf("description %q, want the refusal's detail", d)
	}
	if _, ok := line["requestCharge"]; ok {
		t.Errorf("requestCharge %v for a request that reached no store", line["requestCharge"])
	}
	if line["durationMs"] != 1.5 {
		t.Errorf("durationMs %v, want 1.5", line["durationMs"])
	}
}

// Issue 24, item 5: a function key sent as ?code= (the host hands the
// handler the whole URL and query) never shows in an answer or a log line,
// and a problem's instance is the request's path.
func TestNoAnswerOrLogLineShowsTheFunctionKey(t *testing.T) {
	d := startAPI(t)
	id, body := handlertest.UniqueOrder(t)
	withCode := func(c httpCall) httpCall {
		c.header = c.header.Clone()
		c.header.Del("X-Functions-Key")
		c.target += "?code=" + partnerKey + "&trace=1"
		return c
	}
	var answers []callerAnswer
	for _, c := range []struct {
		function string
		call     httpCall
	}{
		{FunctionSubmitOrder, submitCall("code-"+id, body)},                                                              // 201
		{FunctionSubmitOrder, submitCall("code-"+id, body)},                                                              // replay
		{FunctionSubmitOrder, submitCall("code-2-"+id, body)},                                                            // 200
		{FunctionSubmitOrder, submitCall("", body)},                                                                      // 400
		{FunctionSubmitOrder, submitCall("code-3-"+id, []byte(`{"orderId":`))},                                           // 400
		{FunctionSubmitOrder, submitCall("code-"+id, bytes.Replace(body, []byte(`"CUST-42"`), []byte(`"CUST-9"`), 1))},   // 422 reused
		{FunctionSubmitOrder, submitCall("code-4-"+id, bytes.Replace(body, []byte(`"CUST-42"`), []byte(`"CUST-9"`), 1))}, // 409 taken
		{FunctionGetOrder, getCall(id)},                                                                                  // 200
		{FunctionGetOrder, getCall("ORD-unknown")},                                                                       // 404
	} {
		a := d.call(t, c.function, withCode(c.call))
		answers = append(answers, a)
		if a.StatusCode >= 400 {
			var p problem
			if err := json.Unmarshal(a.Body, &p); err != nil || strings.Contains(p.Instance, "?") || !strings.HasPrefix(p.Instance, ordersPath) {
				t.Errorf("%s %d: instance %q, want the path alone", c.function, a.StatusCode, p.Instance)
			}
		}
	}
	for _, a := range answers {
		var headers strings.Builder
		for k, v := range a.Header {
			headers.WriteString(k + ": " + strings.Join(v, ",") + "\n")
		}
		for where, text := range map[string]string{"body": string(a.Body), "headers": headers.String(), "host Logs": strings.Join(a.Logs, "\n")} {
			if strings.Contains(text, partnerKey) {
				t.Errorf("the %s of a %d answer shows the function key: %s", where, a.StatusCode, text)
			}
		}
	}
	if strings.Contains(d.Logs.String(), partnerKey) {
		t.Errorf("a log line shows the function key")
	}
}
