package httpapi

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/ordersink/orders-consumer/handler"
	"github.com/ordersink/orders-consumer/handler/handlertest"
)

// httpCall is a caller's request to the function app, as the host receives
// it before it invokes the handler.
type httpCall struct {
	method string
	// target is the path and query the caller used: "/api/orders?code=…".
	target string
	header http.Header
	// params are the route parameters the host matched ({orderId}).
	params map[string]string
	body   []byte
	// keyName is the name of the function key the host authenticated the
	// caller with; "" when none (an anonymous function, or Core Tools).
	keyName string
	// keyLevel is that key's level: Function (host and function keys) when
	// "", Admin for the master key, System for an extension's.
	keyLevel string
	// chunked sends the body without Content-Length: the host forwards no
	// body then.
	chunked bool
}

// hostHTTPInvocation encodes a caller's request the way the Functions host
// does for an HTTP-triggered function (docs/host-wire-format.md §6.1):
// Data.req is a JSON object (not double-encoded) with Url, Method, Query
// (repeated names joined with commas), Headers (name -> array of strings, as
// the caller spelled the names), Params only when the route has parameters,
// Identities (the key identity when the caller presented a key), and Body
// only when Content-Length > 0 (base64 for octet-stream);
// Metadata holds the query (without code) and route parameters
// double-encoded, the JSON body's top-level members, Query, Headers (name ->
// single string) and sys.
func hostHTTPInvocation(function string, c httpCall) []byte {
	enc := func(v any) string {
		b, _ := json.Marshal(v)
		return string(b)
	}
	u, err := url.Parse("https://orders-app.azurewebsites.net" + c.target)
	if err != nil {
		panic(err)
	}
	query := map[string]string{}
	for k, vs := range u.Query() {
		query[k] = strings.Join(vs, ",")
	}
	headers := map[string][]string{"Host": {u.Host}, "User-Agent": {"curl/8.5.0"}, "Accept": {"*/*"}}
	for k, vs := range c.header {
		headers[k] = vs
	}
	identities := handlertest.AnonymousIdentities
	if c.keyName != "" {
		level := c.keyLevel
		if level == "" {
			level = "Function"
		}
		identities = handlertest.KeyIdentities(c.keyName, level)
	}
	req := map[string]any{
		"Url": u.String(), "Method": c.method, "Query": query, "Headers": headers,
		"Identities": json.RawMessage(identities),
	}
	switch {
	case c.chunked:
		headers["Transfer-Encoding"] = []string{"chunked"}
	case c.method == http.MethodPost:
		headers["Content-Length"] = []string{strconv.Itoa(len(c.body))}
	}
	if len(c.body) > 0 && !c.chunked {
		req["Body"] = string(c.body)
		if mt, _, _ := mime.ParseMediaType(headerValue(headers, "Content-Type")); mt == "application/octet-stream" {
			req["Body"] = base64.StdEncoding.EncodeToString(c.body)
		}
	}
	meta := map[string]any{}
	if !c.chunked {
		handlertest.AddBodyMembers(meta, c.body)
	}
	for k, v := range query {
		if k != "code" {
			meta[k] = enc(v)
		}
	}
	if len(c.params) > 0 {
		req["Params"] = c.params
		for k, v := range c.params {
			meta[k] = enc(v)
		}
	}
	single := map[string]string{}
	for k, vs := range headers {
		single[k] = strings.Join(vs, ",")
	}
	meta["Query"], meta["Headers"] = query, single
	meta["sys"] = map[string]any{"MethodName": function, "UtcNow": "2026-12-01T10:05:00.0012345Z", "RandGuid": "9b8a7c6d-5e4f-4a3b-9c2d-1e0f9a8b7c6d"}
	out, _ := json.Marshal(map[string]any{"Data": map[string]any{handler.HTTPTriggerBinding: req}, "Metadata": meta})
	return out
}

func headerValue(h map[string][]string, name string) string {
	for k, vs := range h {
		if strings.EqualFold(k, name) && len(vs) > 0 {
			return vs[0]
		}
	}
	return ""
}

// callerAnswer is what the caller gets: the host maps Outputs.res to the
// HTTP response (docs/host-wire-format.md §6.2), and sends the other
// outputs after the handler's answer.
type callerAnswer struct {
	handlertest.Answer
	StatusCode int
	Header     http.Header
	Body       []byte
}

// respondedTo decodes the caller's answer from the host answer the way the
// host does (decodeCallerAnswer).
func respondedTo(t *testing.T, a handlertest.Answer) callerAnswer {
	t.Helper()
	c, err := decodeCallerAnswer(a)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// decodeCallerAnswer maps Outputs.res as the host does: the handler must
// answer the host 200 (anything else is a 500 for the caller); res must be
// an object; statusCode a number or a numeric string; headers string
// values; body a string, sent as is.
func decodeCallerAnswer(a handlertest.Answer) (callerAnswer, error) {
	if a.Status != http.StatusOK {
		return callerAnswer{}, fmt.Errorf("the handler answered the host %d: the caller gets a 500", a.Status)
	}
	raw, ok := a.Outputs[handler.HTTPResponseBinding]
	if !ok {
		return callerAnswer{}, fmt.Errorf("no Outputs.%s: %v", handler.HTTPResponseBinding, a.Outputs)
	}
	var res struct {
		StatusCode json.Number       `json:"statusCode"`
		Headers    map[string]string `json:"headers"`
		Body       *string           `json:"body"`
	}
	if err := json.Unmarshal(raw, &res); err != nil || res.Body == nil {
		return callerAnswer{}, fmt.Errorf("Outputs.res is not an object with a string body: %s (%v)", raw, err)
	}
	code, err := res.StatusCode.Int64()
	if err != nil {
		return callerAnswer{}, fmt.Errorf("Outputs.res.statusCode %q: %v", res.StatusCode, err)
	}
	h := http.Header{}
	for k, v := range res.Headers {
		h.Set(k, v)
	}
	return callerAnswer{Answer: a, StatusCode: int(code), Header: h, Body: []byte(*res.Body)}, nil
}

// headerNames lists the answer's headers, for messages.
func (c callerAnswer) headerNames() string {
	var names []string
	for k := range c.Header {
		names = append(names, k)
	}
	sort.Strings(names)
	return strings.Join(names, ",")
}
