package faults

import (
	"encoding/json"
	"errors"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// upstream is a stand-in for Cosmos that counts what reaches it.
type upstream struct {
	*httptest.Server
	hits atomic.Int64
}

func newUpstream(t *testing.T) *upstream {
	t.Helper()
	u := &upstream{}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.hits.Add(1)
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		// The local emulator closes every connection; the proxy must not
		// pass that on.
		w.Header().Set("Connection", "close")
		if r.URL.Path == "/" {
			_, _ = io.WriteString(w, `{"id":"127.0.0.1","writableLocations":[{"name":"South Central US","databaseAccountEndpoint":"https://`+
				r.Host+`/"}],"readableLocations":[{"name":"South Central US","databaseAccountEndpoint":"https://`+r.Host+`/"}],"enableMultipleWriteLocations":false}`)
			return
		}
		w.WriteHeader(http.StatusCreated)
		_, _ = io.WriteString(w, `{"id":"ORD-1"}`)
	}))
	t.Cleanup(u.Close)
	return u
}

func startProxy(t *testing.T, cfg ProxyConfig) *Proxy {
	t.Helper()
	p, err := StartProxy(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

func only(f Fault) Rates {
	var r Rates
	r[f] = 1
	return r
}

const docsPath = "dbs/shop/colls/orders/docs"

// anOrder is the body of a create.
const anOrder = `{"id":"ORD-1","orderId":"ORD-1"}`

// send makes one request on a connection of its own, with header's
// name-value pairs (an empty value is left out), and reads the answer
// whole; err is why there was none.
func send(t *testing.T, method, url, body string, header ...string) (*http.Response, []byte, error) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		if header[i+1] != "" {
			req.Header.Set(header[i], header[i+1])
		}
	}
	client := &http.Client{Transport: &http.Transport{}, Timeout: 10 * time.Second}
	defer client.CloseIdleConnections()
	resp, err := client.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp, b, err
}

// Each fault that keeps its answer from the client: Throttle, Unavailable
// and Timeout are answered by the proxy with a Cosmos error, and Drop
// closes the connection without an answer: none reaches Cosmos.
// LostAnswer writes and then resets the connection. Only what Cosmos
// answered is observed.
func TestProxyFaults(t *testing.T) {
	tests := []struct {
		fault     Fault
		status    int // 0: no answer
		subStatus string
		err       error // why there is no answer
		forwarded int64 // requests that reached Cosmos
	}{
		{Throttle, http.StatusTooManyRequests, "3200", nil, 0},
		{Unavailable, http.StatusServiceUnavailable, "20001", nil, 0},
		{Timeout, http.StatusRequestTimeout, "0", nil, 0},
		{Drop, 0, "", io.EOF, 0},
		{LostAnswer, 0, "", syscall.ECONNRESET, 1},
	}
	for _, tt := range tests {
		t.Run(tt.fault.String(), func(t *testing.T) {
			up := newUpstream(t)
			seen := make(chan Exchange, 1)
			p := startProxy(t, ProxyConfig{Upstream: up.URL, Rates: only(tt.fault), RetryAfter: 37 * time.Millisecond,
				Observe: func(x Exchange) { seen <- x }})
			resp, body, err := send(t, http.MethodPost, p.URL()+docsPath, anOrder)
			switch {
			case tt.err != nil && !errors.Is(err, tt.err):
				t.Fatalf("err = %v, want no answer (%v)", err, tt.err)
			case tt.err == nil && err != nil:
				t.Fatal(err)
			case tt.err == nil && (resp.StatusCode != tt.status || resp.Header.Get("x-ms-substatus") != tt.subStatus):
				t.Errorf("status %d sub-status %q, want %d %q", resp.StatusCode, resp.Header.Get("x-ms-substatus"), tt.status, tt.subStatus)
			}
			if n := up.hits.Load(); n != tt.forwarded {
				t.Errorf("Cosmos saw %d requests, want %d", n, tt.forwarded)
			}
			if c := p.Counts(); c.Faults[tt.fault] != 1 || c.TotalFaults() != 1 || c.Forwarded != tt.forwarded {
				t.Errorf("counts %+v, want one %s and %d forwarded", c, tt.fault, tt.forwarded)
			}
			select {
			case x := <-seen:
				if tt.forwarded == 0 || x.Fault != tt.fault || x.Status != http.StatusCreated {
					t.Errorf("observed %+v, want only the 201 exchange of a forwarded request, marked %s", x, tt.fault)
				}
			default:
				if tt.forwarded > 0 {
					t.Error("the exchange Cosmos answered was not observed")
				}
			}
			if tt.status >= 400 {
				var e struct{ Code, Message string }
				if err := json.Unmarshal(body, &e); err != nil || e.Code == "" || e.Message == "" {
					t.Errorf("body %s: want a Cosmos error object with code and message", body)
				}
			}
			if tt.fault == Throttle && resp.Header.Get("x-ms-retry-after-ms") != "37" {
				t.Errorf("x-ms-retry-after-ms %q, want 37", resp.Header.Get("x-ms-retry-after-ms"))
			}
		})
	}
}

func TestProxySlowForwardsThenAnswersLate(t *testing.T) {
	up := newUpstream(t)
	const delay = 150 * time.Millisecond
	p := startProxy(t, ProxyConfig{Upstream: up.URL, Rates: only(Slow), SlowMin: delay, SlowMax: delay})
	start := time.Now()
	resp, body, err := send(t, http.MethodPost, p.URL()+docsPath, anOrder)
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < delay {
		t.Errorf("answered after %s, want at least %s", took, delay)
	}
	if resp.StatusCode != http.StatusCreated || string(body) != `{"id":"ORD-1"}` {
		t.Errorf("got %d %s, want the upstream answer", resp.StatusCode, body)
	}
	if resp.Close || resp.Header.Get("Connection") != "" {
		t.Errorf("the upstream's Connection: close reached the client")
	}
	if c := p.Counts(); up.hits.Load() != 1 || c.Faults[Slow] != 1 || c.Forwarded != 1 {
		t.Errorf("Cosmos saw %d requests, counts %+v; want one slow answer forwarded", up.hits.Load(), c)
	}
}

// Latency stands for a Cosmos account that far away: every answer Cosmos
// gave, metadata reads included, comes that much later; an injected fault,
// which never reached Cosmos, does not wait for it.
func TestProxyLatencyHoldsEveryAnswer(t *testing.T) {
	up := newUpstream(t)
	const latency = 100 * time.Millisecond
	p := startProxy(t, ProxyConfig{Upstream: up.URL, Latency: latency})
	for _, path := range []string{"", docsPath} {
		start := time.Now()
		if _, _, err := send(t, http.MethodGet, p.URL()+path, ""); err != nil {
			t.Fatalf("GET /%s: %v", path, err)
		}
		if took := time.Since(start); took < latency {
			t.Errorf("GET /%s answered after %s, want at least %s", path, took, latency)
		}
	}
	if c := p.Counts(); c.TotalFaults() != 0 || c.Forwarded != 2 {
		t.Errorf("counts %+v, want 2 forwarded, no fault", c)
	}

	const far = 5 * time.Second
	throttled := startProxy(t, ProxyConfig{Upstream: up.URL, Latency: far, Rates: only(Throttle)})
	start := time.Now()
	resp, _, err := send(t, http.MethodPost, throttled.URL()+docsPath, anOrder)
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); resp.StatusCode != http.StatusTooManyRequests || took >= far {
		t.Errorf("injected 429: got %d after %s, want 429 before the %s latency", resp.StatusCode, took, far)
	}
}

func TestProxyNeverFaultsMetadata(t *testing.T) {
	up := newUpstream(t)
	p := startProxy(t, ProxyConfig{Upstream: up.URL, Rates: only(Drop)})
	for _, path := range []string{"", "dbs/shop", "dbs/shop/colls/orders", "dbs/shop/colls/orders/pkranges"} {
		if _, _, err := send(t, http.MethodGet, p.URL()+path, ""); err != nil {
			t.Fatalf("GET /%s: %v", path, err)
		}
	}
	if c := p.Counts(); c.TotalFaults() != 0 || c.Metadata != 4 || c.Forwarded != 4 {
		t.Errorf("counts %+v, want 4 metadata reads forwarded, no fault", c)
	}
}

func TestProxyRewritesAccountEndpoints(t *testing.T) {
	up := newUpstream(t)
	p := startProxy(t, ProxyConfig{Upstream: up.URL})
	_, body, err := send(t, http.MethodGet, p.URL(), "")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Writable   []struct{ DatabaseAccountEndpoint string } `json:"writableLocations"`
		Readable   []struct{ DatabaseAccountEndpoint string } `json:"readableLocations"`
		MultiWrite *bool                                      `json:"enableMultipleWriteLocations"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatal(err)
	}
	// The SDK keeps the configured scheme and takes only host:port.
	want := "https://" + strings.TrimPrefix(strings.TrimSuffix(p.URL(), "/"), "http://") + "/"
	for _, locs := range [][]struct{ DatabaseAccountEndpoint string }{doc.Writable, doc.Readable} {
		if len(locs) != 1 || locs[0].DatabaseAccountEndpoint != want {
			t.Errorf("locations %+v, want %s", locs, want)
		}
	}
	if doc.MultiWrite == nil || *doc.MultiWrite {
		t.Errorf("other account fields were not kept")
	}
}

func TestProxyRefusesRemoteUpstream(t *testing.T) {
	for _, u := range []string{"https://acct.documents.azure.com:443/", "http://10.0.0.1:8081/", "127.0.0.1:8081"} {
		if _, err := StartProxy(ProxyConfig{Upstream: u}); err == nil {
			t.Errorf("StartProxy(%q) accepted a non-loopback or non-http upstream", u)
		}
	}
}

func TestRates(t *testing.T) {
	if err := Uniform(0.2).Validate(); err == nil {
		t.Error("rates adding up to 1.2 accepted")
	}
	if err := (Rates{-0.1}).Validate(); err == nil {
		t.Error("negative rate accepted")
	}
	r := Rates{Throttle: 0.1, Drop: 0.2}
	tests := []struct {
		roll float64
		want Fault
	}{{0, Throttle}, {0.0999, Throttle}, {0.1, Drop}, {0.2999, Drop}, {0.3001, -1}, {0.99, -1}}
	for _, tt := range tests {
		if got := r.pick(tt.roll); got != tt.want {
			t.Errorf("pick(%g) = %v, want %v", tt.roll, got, tt.want)
		}
	}
}

func TestProxyRatesHold(t *testing.T) {
	up := newUpstream(t)
	p := startProxy(t, ProxyConfig{Upstream: up.URL, Rates: Rates{Throttle: 0.3, Timeout: 0.2}, Seed: 7})
	const n = 400
	for range n {
		if _, _, err := send(t, http.MethodPost, p.URL()+docsPath, `{}`); err != nil {
			t.Fatal(err)
		}
	}
	c := p.Counts()
	for f, want := range map[Fault]float64{Throttle: 0.3, Timeout: 0.2} {
		got := float64(c.Faults[f]) / n
		// Four standard deviations of a binomial proportion.
		if tol := 4 * math.Sqrt(want*(1-want)/n); math.Abs(got-want) > tol {
			t.Errorf("%s rate %.3f, want %.2f±%.3f", f, got, want, tol)
		}
	}
	if c.Forwarded+c.TotalFaults() != n || c.Forwarded != up.hits.Load() {
		t.Errorf("counts %+v do not add up to %d requests (upstream saw %d)", c, n, up.hits.Load())
	}
}

// A request sent again unchanged after a fault is a client retry; a new
// request (another body) is not.
func TestProxyCountsResends(t *testing.T) {
	up := newUpstream(t)
	p := startProxy(t, ProxyConfig{Upstream: up.URL, Rates: only(Throttle)})
	for _, body := range []string{`{"id":"a"}`, `{"id":"a"}`, `{"id":"b"}`} {
		if _, _, err := send(t, http.MethodPost, p.URL()+docsPath, body); err != nil {
			t.Fatal(err)
		}
	}
	if c := p.Counts(); c.Resent[Throttle] != 1 || c.TotalResent() != 1 {
		t.Errorf("resent %v, want one resend after a 429", c.Resent)
	}
}

// Pick's fault is injected as a rolled one would be, before the rates.
func TestProxyPickComesBeforeTheRates(t *testing.T) {
	up := newUpstream(t)
	pick := Fault(-1)
	p := startProxy(t, ProxyConfig{Upstream: up.URL, Rates: only(Throttle),
		Pick: func(_ int, _, path string, _ []byte) Fault {
			if strings.Contains(path, "/colls/idempotency-keys/") {
				return pick
			}
			return -1
		}})
	keys := p.URL() + "dbs/shop/colls/idempotency-keys/docs"
	resp, _, err := send(t, http.MethodPost, p.URL()+docsPath, anOrder)
	if err != nil || resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("not picked: %v %v, want the rates' 429", resp, err)
	}
	pick = LostAnswer
	if _, _, err := send(t, http.MethodPost, keys, anOrder); err == nil {
		t.Fatal("a lost answer was answered")
	}
	if up.hits.Load() != 1 {
		t.Errorf("upstream saw %d requests, want the one whose answer was lost", up.hits.Load())
	}
	pick = Drop
	if _, _, err := send(t, http.MethodPost, keys, anOrder); err == nil || up.hits.Load() != 1 {
		t.Errorf("dropped: %v, upstream hits %d; want no answer and nothing forwarded", err, up.hits.Load())
	}
	if c := p.Counts(); c.Faults[LostAnswer] != 1 || c.Faults[Drop] != 1 || c.Faults[Throttle] != 1 {
		t.Errorf("faults %v", c.Faults)
	}
}
