package hostemu

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

// customHandler stands in for the handler process: it records every
// invocation and answers with the JSON the caller named in X-Test-Answer
// (one of answers), or with Outputs.res echoing the function and route
// parameters. "status:NNN" answers the host NNN; "sleep" waits for the
// invocation's end.
type customHandler struct {
	t       *testing.T
	answers map[string]string

	mu    sync.Mutex
	calls []handlerCall
}

type handlerCall struct {
	Path   string
	Header http.Header
	Body   []byte
}

func (c *customHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		c.t.Errorf("reading the invocation: %v", err)
	}
	c.mu.Lock()
	c.calls = append(c.calls, handlerCall{Path: r.URL.Path, Header: r.Header.Clone(), Body: body})
	c.mu.Unlock()
	var env struct{ Data map[string]json.RawMessage }
	if err := json.Unmarshal(body, &env); err != nil {
		c.t.Errorf("invocation is not JSON: %v", err)
	}
	var mode string
	var params map[string]string
	for _, raw := range env.Data {
		var req struct {
			Headers map[string][]string
			Params  map[string]string
		}
		if json.Unmarshal(raw, &req) != nil {
			continue // a Service Bus trigger's value is a string
		}
		if v := req.Headers["X-Test-Answer"]; len(v) > 0 {
			mode = v[0]
		}
		params = req.Params
	}
	if code, ok := strings.CutPrefix(mode, "status:"); ok {
		status, err := strconv.Atoi(code)
		if err != nil {
			c.t.Errorf("X-Test-Answer %s: %v", mode, err)
			status = http.StatusInternalServerError
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write([]byte(`{"Outputs":{},"Logs":[]}`))
		return
	}
	if mode == "sleep" {
		<-r.Context().Done()
		return
	}
	answer, ok := c.answers[mode]
	if !ok {
		res, _ := json.Marshal(map[string]any{"statusCode": 200, "body": map[string]any{"function": r.URL.Path, "params": params}})
		answer = `{"Outputs":{"res":` + string(res) + `},"Logs":[],"ReturnValue":` + string(res) + `}`
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte(answer))
}

func (c *customHandler) Calls() []handlerCall {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]handlerCall(nil), c.calls...)
}

// httpRig is the test app of testdata/httpapp served by an HTTPFront whose
// host invokes a customHandler.
type httpRig struct {
	handler *customHandler
	front   *HTTPFront
	invs    chan *Invocation
}

func newHTTPRig(t *testing.T, opts Options, hopts HTTPOptions, answers map[string]string) *httpRig {
	t.Helper()
	serve := func(t *testing.T, h http.Handler) (Endpointer, http.RoundTripper) { return httptestServer(t, h), nil }
	return newHTTPRigOn(t, serve, opts, hopts, answers)
}

// newHTTPRigOn is newHTTPRig with the custom handler served by serve
// (bubbleServer for a test in a synctest bubble).
func newHTTPRigOn(t *testing.T, serve func(*testing.T, http.Handler) (Endpointer, http.RoundTripper), opts Options, hopts HTTPOptions, answers map[string]string) *httpRig {
	t.Helper()
	app, err := LoadApp(filepath.Join("testdata", "httpapp"))
	if err != nil {
		t.Fatal(err)
	}
	rig := &httpRig{handler: &customHandler{t: t, answers: answers}, invs: make(chan *Invocation, 100)}
	opts.Handler, opts.Transport = serve(t, rig.handler)
	opts.Functions, opts.Queue = []*Function{app.Function("ProcessOrder")}, NewQueue("orders", 0)
	opts.Encoder = refEncoder("2026-12-01T10:05:00.0012345Z", "9b8a7c6d-5e4f-4a3b-9c2d-1e0f9a8b7c6d")
	host, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	hopts.Functions = app.Functions
	hopts.Observe = func(inv *Invocation) { rig.invs <- inv }
	if rig.front, err = host.HTTP(hopts); err != nil {
		t.Fatal(err)
	}
	return rig
}

// do sends one request through the HTTP API, in process.
func (rig *httpRig) do(method, target, body string, header http.Header) *httptest.ResponseRecorder {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	r := httptest.NewRequest(method, target, rd)
	r.Host = "contoso-orders.azurewebsites.net"
	for k, vs := range header {
		r.Header[k] = vs
	}
	w := httptest.NewRecorder()
	rig.front.ServeHTTP(w, r)
	return w
}

func TestHTTPEnvelopeMatchesGolden(t *testing.T) {
	// The query's code is the key named partner-a: the envelope carries
	// the host's authenticated identity with the key's name (the route
	// itself is anonymous, which does not stop the host authenticating).
	rig := newHTTPRig(t, Options{}, HTTPOptions{FunctionKeys: map[string]string{"default": "k-default", "partner-a": "secret"}}, nil)
	body := `{"orderId":"A-1001","customerId":"C-42","total":19.98,"placedAt":"2026-11-29T10:00:00Z","lines":[{"sku":"S"}],"meta":{"attempt":1},"note":null}`
	w := rig.do("PUT", "/api/tenants/contoso/items/42?dryRun=true&tag=a&Tag=b&code=secret&orderId=Q-1", body, http.Header{
		"Accept":          {"application/json"},
		"Content-Type":    {"application/json"},
		"Idempotency-Key": {"7c9e6679-7425-40de-944b-e07fc1f90ae7"},
		"X-Forwarded-For": {"10.0.0.1", "10.0.0.2"},
	})
	if w.Code != http.StatusOK {
		t.Fatalf("status %d, body %s", w.Code, w.Body)
	}
	calls := rig.handler.Calls()
	if len(calls) != 1 || calls[0].Path != "/Items" {
		t.Fatalf("calls %+v, want one POST /Items", calls)
	}
	h := calls[0].Header
	if h.Get("Content-Type") != "application/json; charset=utf-8" || h.Get("X-Azure-Functions-InvocationId") == "" ||
		h.Get("User-Agent") != "Azure-Functions-Host/"+HostVersion {
		t.Errorf("invocation headers %v", h)
	}
	golden := filepath.Join("testdata", "http-envelope.json")
	got := append(bytes.Clone(calls[0].Body), '\n')
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("envelope differs from %s (go test -run TestHTTPEnvelopeMatchesGolden -update rewrites it)\n got %s\nwant %s", golden, got, want)
	}
}

func TestHTTPEnvelopeBodies(t *testing.T) {
	rig := newHTTPRig(t, Options{}, HTTPOptions{}, nil)
	tests := []struct {
		name, contentType, body string
		chunked                 bool
		want                    any // Data.request.Body; nil: absent
	}{
		{"text", "text/plain", "héllo", false, "héllo"},
		{"json keeps its text", "application/json", `{"a": 1}`, false, `{"a": 1}`},
		{"octet-stream is base64", "application/octet-stream", "\x00\xff", false, "AP8="},
		{"multipart is base64", "multipart/form-data; boundary=x", "--x--", false, "LS14LS0="},
		{"byte order mark dropped", "text/plain", "\xef\xbb\xbfhi", false, "hi"},
		{"chunked gets no body", "application/json", `{"a":1}`, true, nil},
		{"empty gets no body", "application/json", "", false, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n := len(rig.handler.Calls())
			r := httptest.NewRequest("POST", "/api/Echo", strings.NewReader(tc.body))
			r.Header.Set("Content-Type", tc.contentType)
			if tc.chunked {
				r.ContentLength, r.TransferEncoding = -1, []string{"chunked"}
			}
			w := httptest.NewRecorder()
			rig.front.ServeHTTP(w, r)
			calls := rig.handler.Calls()
			if w.Code != http.StatusOK || len(calls) != n+1 {
				t.Fatalf("status %d, %d calls", w.Code, len(calls)-n)
			}
			var env struct {
				Data     struct{ Request map[string]any }
				Metadata map[string]any
			}
			if err := json.Unmarshal(calls[n].Body, &env); err != nil {
				t.Fatal(err)
			}
			if got, ok := env.Data.Request["Body"]; tc.want == nil && ok || tc.want != nil && got != tc.want {
				t.Errorf("Body = %#v (present %v), want %#v", got, ok, tc.want)
			}
			if _, ok := env.Metadata["a"]; ok != (tc.name == "json keeps its text") {
				t.Errorf("Metadata.a present %v: body members are copied only from a body the host read", ok)
			}
		})
	}
}

func TestHTTPRouting(t *testing.T) {
	rig := newHTTPRig(t, Options{}, HTTPOptions{}, nil)
	tests := []struct {
		method, target string
		status         int
		function       string
		params         map[string]any
	}{
		{"POST", "/api/orders", 200, "/SubmitOrder", nil},
		{"post", "/API/Orders/", 200, "/SubmitOrder", nil},
		{"GET", "/api/orders/A-1001", 200, "/GetOrder", map[string]any{"orderId": "A-1001"}},
		{"GET", "/api/orders/A%2F1", 200, "/GetOrder", map[string]any{"orderId": "A/1"}},
		{"GET", "/api/Echo", 200, "/Echo", nil},
		{"DELETE", "/api/echo", 200, "/Echo", nil},
		{"GET", "/api/tenants/t1/items/7", 200, "/Items", map[string]any{"tenant": "t1", "id": "7"}},
		{"PUT", "/api/tenants/t1/items/7/full", 200, "/Items", map[string]any{"tenant": "t1", "id": "7", "view": "full"}},
		{"GET", "/api/tenants/t1/items/x7", 404, "", nil},          // {id:int}
		{"GET", "/api/tenants/t1/items/7/full/more", 404, "", nil}, // too long
		{"GET", "/api/orders", 404, "", nil},                       // SubmitOrder is POST only: the host says 404
		{"DELETE", "/api/orders/A-1", 404, "", nil},
		{"GET", "/api/nothing", 404, "", nil},
		{"GET", "/orders", 404, "", nil},
		{"GET", "/api", 404, "", nil},
	}
	for _, tc := range tests {
		t.Run(tc.method+" "+tc.target, func(t *testing.T) {
			n := len(rig.handler.Calls())
			w := rig.do(tc.method, tc.target, "", nil)
			calls := rig.handler.Calls()[n:]
			if w.Code != tc.status {
				t.Fatalf("status %d, want %d (%s)", w.Code, tc.status, w.Header().Get(reasonHeader))
			}
			if tc.status != 200 {
				if len(calls) != 0 || w.Body.Len() != 0 {
					t.Errorf("%d calls, body %q: a refused request reaches no function and has no body", len(calls), w.Body)
				}
				return
			}
			if len(calls) != 1 || calls[0].Path != tc.function {
				t.Fatalf("calls %v, want %s", calls, tc.function)
			}
			var got struct{ Params map[string]any }
			if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil {
				t.Fatal(err)
			}
			if len(got.Params) != len(tc.params) {
				t.Errorf("params %v, want %v", got.Params, tc.params)
			}
			for k, v := range tc.params {
				if got.Params[k] != v {
					t.Errorf("params %v, want %v", got.Params, tc.params)
				}
			}
		})
	}
	if w := rig.do("GET", "/api/orders", "", nil); !strings.Contains(w.Header().Get(reasonHeader), "method GET not allowed") {
		t.Errorf("reason %q: a known route with another method should say so", w.Header().Get(reasonHeader))
	}
}

func TestHTTPRoutePrecedence(t *testing.T) {
	fn := func(name, route string) *Function {
		return &Function{Name: name, Bindings: []Binding{{Name: "req", Type: "httpTrigger", Direction: "in", AuthLevel: "anonymous", Route: route},
			{Name: "res", Type: "http", Direction: "out"}}}
	}
	h, err := New(Options{Functions: []*Function{singleFunction()}, Queue: NewQueue("orders", 0), Handler: FixedEndpoint("http://127.0.0.1:1")})
	if err != nil {
		t.Fatal(err)
	}
	empty := ""
	front, err := h.HTTP(HTTPOptions{RoutePrefix: &empty, Functions: []*Function{
		fn("Any", "orders/{*rest}"), fn("ByID", "orders/{id}"), fn("ByNumber", "orders/{id:int}"), fn("Summary", "orders/summary"),
	}})
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{"/orders/summary": "Summary", "/orders/12": "ByNumber", "/orders/A-1": "ByID", "/orders/a/b": "Any"} {
		r, _, reason := front.match(httptest.NewRequest("GET", path, nil))
		if r == nil || r.fn.Name != want {
			t.Errorf("%s: got %v (%s), want %s", path, r, reason, want)
		}
	}
}

func TestParseRouteRefusesWhatTheRouterRefuses(t *testing.T) {
	for _, tmpl := range []string{"a/{x?}/b", "{*rest}/b", "a/{}", "a/x{y}", "a/{id:regex(x)}", "a/{id:minlength(z)}", "a//b"} {
		if _, err := ParseRoute(tmpl); err == nil {
			t.Errorf("ParseRoute(%q) accepted it", tmpl)
		}
	}
	for _, tmpl := range []string{"", "/orders/", "a/{x:int:minlength(2)}", "a/{x?}/{y?}", "a/{x:alpha?}", "files/{**path}"} {
		if _, err := ParseRoute(tmpl); err != nil {
			t.Errorf("ParseRoute(%q): %v", tmpl, err)
		}
	}
}

func TestHTTPFunctionKey(t *testing.T) {
	keys := map[string]string{"default": "k-123", "partner-b": "k-456"}
	enforced := newHTTPRig(t, Options{}, HTTPOptions{FunctionKeys: keys}, nil)
	open := newHTTPRig(t, Options{}, HTTPOptions{}, nil)
	tests := []struct {
		name, target string
		header       http.Header
		enforced     int
		// keyName is what the handler is told with keys enforced.
		keyName string
	}{
		{"no key", "/api/orders", nil, 401, ""},
		{"wrong header key", "/api/orders", http.Header{"X-Functions-Key": {"nope"}}, 401, ""},
		{"wrong code", "/api/orders?code=nope", nil, 401, ""},
		{"header key", "/api/orders", http.Header{"X-Functions-Key": {"k-123"}}, 200, "default"},
		{"another key", "/api/orders", http.Header{"X-Functions-Key": {"k-456"}}, 200, "partner-b"},
		{"header before code", "/api/orders?code=k-123", http.Header{"X-Functions-Key": {"k-456"}}, 200, "partner-b"},
		{"code query", "/api/orders?code=k-123", nil, 200, "default"},
		{"Code in any case", "/api/orders?CODE=k-456", nil, 200, "partner-b"},
		{"anonymous function", "/api/Echo", nil, 200, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if w := enforced.do("POST", tc.target, "", tc.header); w.Code != tc.enforced {
				t.Errorf("with function keys: status %d, want %d", w.Code, tc.enforced)
			} else if w.Code == 200 {
				<-enforced.invs
				if got := keyNameClaim(t, enforced.lastEnvelope(t)); got != tc.keyName {
					t.Errorf("key name claim %q, want %q", got, tc.keyName)
				}
			}
			// Core Tools does not check keys, and names none.
			if w := open.do("POST", tc.target, "", tc.header); w.Code != 200 {
				t.Errorf("without keys set: status %d, want 200", w.Code)
			} else if <-open.invs; keyNameClaim(t, open.lastEnvelope(t)) != "" {
				t.Error("without keys set: the envelope names a key")
			}
		})
	}
	if n := len(enforced.handler.Calls()); n != 6 {
		t.Errorf("%d invocations with keys enforced, want 6: a refused caller reaches no handler", n)
	}
}

// lastEnvelope is the body of the handler's last invocation.
func (rig *httpRig) lastEnvelope(t *testing.T) []byte {
	t.Helper()
	calls := rig.handler.Calls()
	if len(calls) == 0 {
		t.Fatal("the handler was not invoked")
	}
	return calls[len(calls)-1].Body
}

// keyNameClaim is the keyid claim of the identities an HTTP invocation's
// envelope carries, read as a handler reads it; "" when no identity is
// authenticated.
func keyNameClaim(t *testing.T, envelope []byte) string {
	t.Helper()
	type identity struct {
		AuthenticationType *string
		IsAuthenticated    bool
		Claims             []struct{ Type, Value string }
	}
	var env struct {
		Data map[string]struct{ Identities []identity }
	}
	if err := json.Unmarshal(envelope, &env); err != nil || len(env.Data) != 1 {
		t.Fatalf("envelope %s: %v, want one trigger value", envelope, err)
	}
	var ids []identity
	for _, req := range env.Data {
		ids = req.Identities
	}
	if len(ids) != 1 {
		t.Fatalf("envelope %s: %d identities, want one", envelope, len(ids))
	}
	if !ids[0].IsAuthenticated {
		if len(ids[0].Claims) != 0 || ids[0].AuthenticationType != nil {
			t.Errorf("an unauthenticated identity with claims or a scheme: %+v", ids[0])
		}
		return ""
	}
	if ids[0].AuthenticationType == nil || *ids[0].AuthenticationType != "WebJobsAuthLevel" {
		t.Errorf("AuthenticationType %v, want WebJobsAuthLevel", ids[0].AuthenticationType)
	}
	for _, c := range ids[0].Claims {
		if c.Type == claimKeyID {
			return c.Value
		}
	}
	t.Errorf("an authenticated identity without the keyid claim: %+v", ids[0])
	return ""
}

func TestHTTPResponseMapping(t *testing.T) {
	// mode is the handler's answer (X-Test-Answer): answer, or status:NNN.
	tests := []struct {
		mode, answer string
		status       int
		header       map[string]string
		body         string
	}{
		{"number", `{"Outputs":{"res":{"statusCode":202,"headers":{"Location":"/api/orders/A-1","Content-Type":"application/json"},"body":"{\"orderId\":\"A-1\"}"}}}`,
			202, map[string]string{"Location": "/api/orders/A-1", "Content-Type": "application/json"}, `{"orderId":"A-1"}`},
		{"string status", `{"Outputs":{"res":{"statusCode":"201","body":"made"}}}`, 201, map[string]string{"Content-Type": "text/plain; charset=utf-8"}, "made"},
		{"any case", `{"outputs":{"res":{"StatusCode":409,"Headers":{"Retry-After":3},"BODY":"busy"}}}`, 409, map[string]string{"Retry-After": "3"}, "busy"},
		{"json body", `{"Outputs":{"res":{"statusCode":422,"body":{"title":"bad","n":19.90}}}}`,
			422, map[string]string{"Content-Type": "application/json; charset=utf-8"}, `{"title":"bad","n":19.90}`},
		{"array body", `{"Outputs":{"res":{"body":[1,true]}}}`, 200, nil, `[1,true]`},
		{"no status", `{"Outputs":{"res":{"body":"plain"}}}`, 200, nil, "plain"},
		{"odd status", `{"Outputs":{"res":{"statusCode":"soon","body":"x"}}}`, 200, nil, "x"},
		{"header kinds", `{"Outputs":{"res":{"statusCode":200,"headers":{"X-Bool":true,"X-Num":1.50,"X-Null":null}}}}`,
			200, map[string]string{"X-Bool": "True", "X-Num": "1.5", "X-Null": ""}, ""},
		{"json text", `{"Outputs":{"res":"{\"statusCode\":204}"}}`, 204, nil, ""},
		{"no res", `{"Outputs":{},"Logs":[]}`, 200, nil, ""},
		{"res string", `{"Outputs":{"res":"hello"}}`, 500, nil, ""},
		{"res number", `{"Outputs":{"res":5}}`, 500, nil, ""},
		{"res array", `{"Outputs":{"res":[{"statusCode":200}]}}`, 500, nil, ""},
		{"bad headers", `{"Outputs":{"res":{"statusCode":200,"headers":["a"]}}}`, 500, nil, ""},
		{"bad header", `{"Outputs":{"res":{"statusCode":200,"headers":{"Bad Name":"x"}}}}`, 500, nil, ""},
		{"status object", `{"Outputs":{"res":{"statusCode":{"code":200}}}}`, 500, nil, ""},
		{"status 1000", `{"Outputs":{"res":{"statusCode":1000}}}`, 500, nil, ""},
		{"invalid json", `{"Outputs":`, 500, nil, ""},
		{"status:400", "", 500, nil, ""},
		{"status:503", "", 500, nil, ""},
	}
	answers := map[string]string{}
	for _, tc := range tests {
		answers[tc.mode] = tc.answer
	}
	rig := newHTTPRig(t, Options{}, HTTPOptions{}, answers)
	for _, tc := range tests {
		t.Run(tc.mode, func(t *testing.T) {
			w := rig.do("POST", "/api/orders", `{"orderId":"A-1"}`, http.Header{"X-Test-Answer": {tc.mode}})
			inv := <-rig.invs
			if w.Code != tc.status || w.Body.String() != tc.body {
				t.Fatalf("answered %d %q, want %d %q (failure %q)", w.Code, w.Body, tc.status, tc.body, inv.Failure)
			}
			for k, v := range tc.header {
				if got, ok := w.Header()[k]; !ok || got[0] != v {
					t.Errorf("header %s = %q, want %q", k, got, v)
				}
			}
			if inv.OK() != (tc.status != 500) || inv.Response == nil || inv.Response.Status != w.Code {
				t.Errorf("invocation ok %v (%s), response %+v", inv.OK(), inv.Failure, inv.Response)
			}
		})
	}
}

// TestHTTPFunctionTimeoutAnswers500AndRestarts: an HTTP invocation past
// functionTimeout answers the caller 500 at the timeout, and the host
// restarts the handler. On virtual time.
func TestHTTPFunctionTimeoutAnswers500AndRestarts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		restarts := make(chan string, 1)
		const timeout = 200 * time.Millisecond
		opts := Options{FunctionTimeout: timeout, Restart: func(reason string) error { restarts <- reason; return nil }}
		rig := newHTTPRigOn(t, bubbleServer, opts, HTTPOptions{}, nil)
		start := time.Now()
		w := rig.do("POST", "/api/orders", "{}", http.Header{"X-Test-Answer": {"sleep"}})
		inv := <-rig.invs
		if w.Code != 500 || !inv.TimedOut || time.Since(start) != timeout {
			t.Fatalf("status %d, timed out %v after %s; want 500 at the timeout (%s)", w.Code, inv.TimedOut, time.Since(start), timeout)
		}
		select {
		case reason := <-restarts:
			if !strings.Contains(reason, "Timeout value of 00:00:00.200 exceeded by function 'Functions.SubmitOrder'") {
				t.Errorf("restart reason %q", reason)
			}
		default:
			t.Error("the handler was not restarted")
		}
	})
}

func TestHTTPBodyLimits(t *testing.T) {
	rig := newHTTPRig(t, Options{}, HTTPOptions{MaxRequestBodyBytes: 10}, nil)
	if w := rig.do("POST", "/api/Echo", strings.Repeat("x", 11), nil); w.Code != http.StatusRequestEntityTooLarge {
		t.Errorf("11 bytes over a limit of 10: status %d, want 413", w.Code)
	}
	if w := rig.do("POST", "/api/Echo", strings.Repeat("x", 10), nil); w.Code != http.StatusOK {
		t.Errorf("10 bytes: status %d", w.Code)
	}
	if n := len(rig.handler.Calls()); n != 1 {
		t.Errorf("%d invocations, want 1", n)
	}
}

// The listener serves over the network until its context ends.
func TestHTTPListen(t *testing.T) {
	rig := newHTTPRig(t, Options{}, HTTPOptions{}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	base, wait, err := ListenHandler(ctx, "127.0.0.1:0", rig.front)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post(base+"/api/Echo?x=1", "application/json", strings.NewReader(`{"a":1}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("status %d", resp.StatusCode)
	}
	inv := <-rig.invs
	if !strings.HasPrefix(inv.Request.URL, base+"/api/Echo?x=1") || inv.Request.Host == "" {
		t.Errorf("request %+v", inv.Request)
	}
	cancel()
	if err := wait(); err != nil {
		t.Fatal(err)
	}
	if _, err := http.Get(base + "/api/Echo"); err == nil {
		t.Error("still serving after the context ended")
	}
}

// A function key in the query is a credential: what the emulator logs of a
// request (its failure line, and LogURL for make run's lines) hides it, as
// the Functions host's log sanitizer does.
func TestHTTPLogsHideTheFunctionKey(t *testing.T) {
	const key = "k-secret-123"
	var mu sync.Mutex
	var logged []string
	rig := newHTTPRig(t, Options{Log: func(s string) { mu.Lock(); logged = append(logged, s); mu.Unlock() }},
		HTTPOptions{FunctionKeys: map[string]string{"default": key}}, nil)
	w := rig.do("POST", "/api/orders?dryRun=1&CODE="+key, "{}", http.Header{"X-Test-Answer": {"status:500"}})
	inv := <-rig.invs
	if w.Code != 500 {
		t.Fatalf("caller got %d, want the failed invocation's 500", w.Code)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, line := range append(logged, inv.Request.LogURL()) {
		if strings.Contains(line, key) {
			t.Errorf("logged the function key: %s", line)
		}
	}
	if got := inv.Request.LogURL(); !strings.Contains(got, "/api/orders?dryRun=1") {
		t.Errorf("LogURL %q lost the rest of the URL", got)
	}
	if !strings.Contains(inv.Request.URL, key) {
		t.Error("the envelope's Url must keep code, as the host's does")
	}
}
