package handler

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/ordersink/orders-consumer/idempotency"
)

// Requests that are not submissions, and every spelling of one the host may
// send.
func TestSubmitOrderRefusesBadRequestsBeforeClaimingTheKey(t *testing.T) {
	d := startFrontDoor(t, func(c *Config) { c.MaxMessageBytes = 64 << 10 })
	id, body := uniqueOrder(t)
	// A top-level member the event does not copy: the event fits, the
	// order as one queue message does not.
	big := bytes.Replace(body, []byte(`"total"`), []byte(`"note":"`+strings.Repeat("x", 63<<10)+`","total"`), 1)
	for _, tc := range []struct {
		name   string
		key    string
		body   []byte
		status int
		anchor string
		detail string
	}{
		{"no key", "", body, 400, "idempotency-key-missing", "Idempotency-Key"},
		{"key too long", strings.Repeat("k", 256), body, 400, "idempotency-key-malformed", "at most 255"},
		{"key with a space", "my key", body, 400, "idempotency-key-malformed", "visible ASCII"},
		{"key not ASCII", "schlüssel", body, 400, "idempotency-key-malformed", "visible ASCII"},
		{"empty quoted key", `""`, body, 400, "idempotency-key-malformed", "empty"},
		{"bad sf-string", `"a\x"`, body, 400, "idempotency-key-malformed", "escape"},
		{"no body", "k-" + id, nil, 400, "body-missing", "JSON object"},
		{"not JSON", "k-" + id, []byte(`{"orderId":`), 400, "malformed-order", "not an order document"},
		{"duplicate member", "k-" + id, []byte(`{"orderId":"a","orderId":"b"}`), 400, "malformed-order", "not an order document"},
		{"rule broken", "k-" + id, bytes.Replace(body, []byte(`"EUR"`), []byte(`"euro"`), 1), 422, "invalid-order", "currency"},
		{"total wrong", "k-" + id, bytes.Replace(body, []byte(`"44.98"`), []byte(`"44.99"`), 1), 422, "invalid-order", "total"},
		{"too large for one message", "k-" + id, big, 413, "order-too-large", "bytes"},
		// The queue path's rule of docs/contract.md §3 "event size": the
		// host indents each array element on a line of its own.
		{"event too large", "k-" + id, orderWithArray(id, 9000), 422, "invalid-order", "OrderAccepted event"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := submitCall(tc.key, tc.body)
			if tc.key == `"a\x"` {
				c.header.Set(headerIdempotencyKey, `"a\x"`)
			}
			a := d.call(t, FunctionSubmitOrder, c)
			p := wantProblem(t, a, tc.status, tc.anchor)
			if !strings.Contains(p.Detail, tc.detail) {
				t.Errorf("detail %q does not mention %q", p.Detail, tc.detail)
			}
			if p.Instance != ordersPath {
				t.Errorf("instance %q, want %s", p.Instance, ordersPath)
			}
			if tc.anchor == "invalid-order" && (tc.detail == "currency" || tc.detail == "total") && p.Field != tc.detail {
				t.Errorf("422 names field %q, want %q", p.Field, tc.detail)
			}
		})
	}
	d.wantNoKey(t, "k-"+id)
	// The key stays free for the corrected order.
	if a := d.submit(t, "k-"+id, body); a.StatusCode != http.StatusAccepted {
		t.Errorf("corrected order: %d %s", a.StatusCode, a.Body)
	}
}

func TestSubmitOrderKeyHeaderTwiceIsRefused(t *testing.T) {
	d := startFrontDoor(t)
	_, body := uniqueOrder(t)
	c := submitCall("a", body)
	c.header[headerIdempotencyKey] = []string{"a", "b"}
	wantProblem(t, d.call(t, FunctionSubmitOrder, c), http.StatusBadRequest, "idempotency-key-malformed")
}

func TestSubmitOrderReadsEveryHostSpelling(t *testing.T) {
	d := startFrontDoor(t)
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
			s, _ := json.Marshal(string(inv["Data"][HTTPTriggerBinding]))
			inv["Data"][HTTPTriggerBinding] = s
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
		{"function key in the query", func(c httpCall) []byte {
			c.header.Del("X-Functions-Key")
			c.target += "?code=" + partnerKey
			return hostHTTPInvocation(FunctionSubmitOrder, c)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id, body := uniqueOrder(t)
			a := respondedTo(t, d.invokeFunction(t, FunctionSubmitOrder, tc.build(submitCall("k-"+id, body))))
			if a.StatusCode != http.StatusAccepted {
				t.Fatalf("%d %s", a.StatusCode, a.Body)
			}
			if q := sentOrder(t, a); q == nil || q.Body != string(body) {
				t.Errorf("order output %+v", q)
			}
			// Every spelling names the same client: the key is the partner's.
			d.wantKeyOf(t, "key:"+shortSHA256(partnerKey), "k-"+id)
		})
	}
}

// wantKeyOf checks that the key was claimed under client's scope.
func (d *frontDoor) wantKeyOf(t *testing.T, client, key string) {
	t.Helper()
	id := idempotency.Scope{Client: client, Operation: FunctionSubmitOrder, Key: key}.ID()
	if r, err := d.keys.Read(t.Context(), id); err != nil || r.State != idempotency.Succeeded {
		t.Errorf("key record under %s: %+v, %v", client, r, err)
	}
}

func TestSubmitOrderClientScope(t *testing.T) {
	for _, tc := range []struct {
		name     string
		easyAuth bool
		header   http.Header
		query    string
		want     string
	}{
		{"Easy Auth principal wins", true, http.Header{"X-Ms-Client-Principal-Id": {"0b6f2c1e"}, "X-Functions-Key": {partnerKey}}, "", "principal:0b6f2c1e"},
		// Without Easy Auth in front nothing strips the header: a caller
		// could take another's scope with it.
		{"a principal header without Easy Auth", false, http.Header{"X-Ms-Client-Principal-Id": {"0b6f2c1e"}, "X-Functions-Key": {partnerKey}}, "", "key:" + shortSHA256(partnerKey)},
		{"function key header", false, http.Header{"X-Functions-Key": {partnerKey}}, "?code=other", "key:" + shortSHA256(partnerKey)},
		{"function key in the query", false, nil, "?code=" + partnerKey, "key:" + shortSHA256(partnerKey)},
		{"the query name in another case", false, nil, "?Code=" + partnerKey, "key:" + shortSHA256(partnerKey)},
		{"nothing: a local run", false, nil, "", "anonymous"},
		{"Easy Auth without a principal", true, nil, "", "anonymous"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u, _ := url.Parse(ordersPath + tc.query)
			r := &httpRequest{Header: tc.header, Query: map[string]string{}}
			if r.Header == nil {
				r.Header = http.Header{}
			}
			for k, v := range u.Query() {
				r.Query[k] = v[0]
			}
			if got := clientScope(r, tc.easyAuth); got != tc.want {
				t.Errorf("scope %q, want %q", got, tc.want)
			}
		})
	}
}

func TestSubmitOrderHostEnvelopeProblems(t *testing.T) {
	d := startFrontDoor(t, func(c *Config) { c.MaxRequestBytes = 16 << 10 })
	_, body := uniqueOrder(t)
	t.Run("no req binding", func(t *testing.T) {
		a := respondedTo(t, d.invokeFunction(t, FunctionSubmitOrder, []byte(`{"Data":{"request":{}},"Metadata":{}}`)))
		wantProblem(t, a, http.StatusInternalServerError, "internal-error")
		if a.Header.Get("Retry-After") == "" {
			t.Error("a 500 without Retry-After")
		}
		if !strings.Contains(d.logsOf(a.answer), `"level":"ERROR"`) {
			t.Errorf("not logged at ERROR: %s", d.logsOf(a.answer))
		}
	})
	t.Run("request over MAX_REQUEST_BYTES", func(t *testing.T) {
		huge := bytes.Replace(body, []byte(`"sku":"SKU-1"`), []byte(`"sku":"SKU-1","note":"`+strings.Repeat("x", 20<<10)+`"`), 1)
		a := respondedTo(t, d.invokeFunction(t, FunctionSubmitOrder, hostHTTPInvocation(FunctionSubmitOrder, submitCall("k", huge))))
		wantProblem(t, a, http.StatusRequestEntityTooLarge, "order-too-large")
	})
}

// An orderId the rules refuse is still named in the log line and the
// host's Logs, but cut: a caller's request may hold megabytes of it
// (MAX_REQUEST_BYTES), and every byte would be written twice per request.
func TestSubmitOrderLogsARefusedOrderIDCut(t *testing.T) {
	d := startFrontDoor(t)
	_, body := uniqueOrder(t)
	long := strings.Repeat("O", 1<<20)
	body = []byte(`{"orderId":"` + long + `"` + string(body[bytes.IndexByte(body, ','):]))
	a := d.submit(t, "long-order-id", body)
	wantProblem(t, a, http.StatusBadRequest, "malformed-order")
	line := d.logsOf(a.answer)
	for name, got := range map[string]int{"log line": len(line), "host Logs": len(strings.Join(a.Logs, ""))} {
		if got > 4<<10 {
			t.Errorf("the %s is %d bytes for a %d-byte orderId", name, got, len(long))
		}
	}
	if !strings.Contains(line, strings.Repeat("O", 100)) {
		t.Errorf("the log line does not name the orderId's start: %.300s", line)
	}
}
