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

func post(t *testing.T, url string) (*http.Response, []byte, error) {
	t.Helper()
	client := &http.Client{Transport: &http.Transport{}, Timeout: 10 * time.Second}
	defer client.CloseIdleConnections()
	resp, err := client.Post(url, "application/json", strings.NewReader(`{"id":"ORD-1","orderId":"ORD-1"}`))
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp, b, err
}

func TestProxyAnswersWithoutForwarding(t *testing.T) {
	tests := []struct {
		fault     Fault
		status    int
		subStatus string
	}{
		{Throttle, http.StatusTooManyRequests, "3200"},
		{Unavailable, http.StatusServiceUnavailable, "20001"},
		{Timeout, http.StatusRequestTimeout, "0"},
	}
	for _, tt := range tests {
		t.Run(tt.fault.String(), func(t *testing.T) {
			up := newUpstream(t)
			p := startProxy(t, ProxyConfig{Upstream: up.URL, Rates: only(tt.fault), RetryAfter: 37 * time.Millisecond})
			resp, body, err := post(t, p.URL()+docsPath)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != tt.status {
				t.Errorf("status %d, want %d", resp.StatusCode, tt.status)
			}
			if got := resp.Header.Get("x-ms-substatus"); got != tt.subStatus {
				t.Errorf("x-ms-substatus %q, want %q", got, tt.subStatus)
			}
			if tt.fault == Throttle {
				if got := resp.Header.Get("x-ms-retry-after-ms"); got != "37" {
					t.Errorf("x-ms-retry-after-ms %q, want 37", got)
				}
			}
			var e struct{ Code, Message string }
			if err := json.Unmarshal(body, &e); err != nil || e.Code == "" || e.Message == "" {
				t.Errorf("body %s: want a Cosmos error object with code and message", body)
			}
			if n := up.hits.Load(); n != 0 {
				t.Errorf("Cosmos saw %d requests, want 0: the fault is answered by the proxy", n)
			}
			if c := p.Counts(); c.Faults[tt.fault] != 1 || c.TotalFaults() != 1 || c.Forwarded != 0 {
				t.Errorf("counts %+v, want one %s and nothing forwarded", c, tt.fault)
			}
		})
	}
}

func TestProxyDropClosesWithoutAnswer(t *testing.T) {
	up := newUpstream(t)
	p := startProxy(t, ProxyConfig{Upstream: up.URL, Rates: only(Drop)})
	_, _, err := post(t, p.URL()+docsPath)
	if err == nil || !strings.Contains(err.Error(), "EOF") {
		t.Fatalf("err = %v, want the connection closed without an answer (EOF)", err)
	}
	if n := up.hits.Load(); n != 0 {
		t.Errorf("Cosmos saw %d requests, want 0", n)
	}
	if c := p.Counts(); c.Faults[Drop] != 1 {
		t.Errorf("dropped %d, want 1", c.Faults[Drop])
	}
}

func TestProxyLostAnswerWritesThenResets(t *testing.T) {
	up := newUpstream(t)
	seen := make(chan Exchange, 1)
	p := startProxy(t, ProxyConfig{Upstream: up.URL, Rates: only(LostAnswer), Observe: func(x Exchange) { seen <- x }})
	_, _, err := post(t, p.URL()+docsPath)
	if !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("err = %v, want a connection reset", err)
	}
	if n := up.hits.Load(); n != 1 {
		t.Errorf("Cosmos saw %d requests, want 1: the write happens, only its answer is lost", n)
	}
	if x := <-seen; x.Fault != LostAnswer || x.Status != http.StatusCreated {
		t.Errorf("observed %+v, want the 201 exchange marked lost-answer", x)
	}
	if c := p.Counts(); c.Faults[LostAnswer] != 1 || c.Forwarded != 1 {
		t.Errorf("counts %+v", c)
	}
}

func TestProxySlowForwardsThenAnswersLate(t *testing.T) {
	up := newUpstream(t)
	const delay = 150 * time.Millisecond
	p := startProxy(t, ProxyConfig{Upstream: up.URL, Rates: only(Slow), SlowMin: delay, SlowMax: delay})
	start := time.Now()
	resp, body, err := post(t, p.URL()+docsPath)
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
	if n := up.hits.Load(); n != 1 {
		t.Errorf("Cosmos saw %d requests, want 1", n)
	}
}

// Latency stands for a Cosmos account that far away: every answer Cosmos
// gave, metadata reads included, comes that much later; an injected fault,
// which never reached Cosmos, does not wait for it.
func TestProxyLatencyHoldsEveryAnswer(t *testing.T) {
	up := newUpstream(t)
	const latency = 100 * time.Millisecond
	p := startProxy(t, ProxyConfig{Upstream: up.URL, Latency: latency})
	client := &http.Client{Timeout: 10 * time.Second}
	for _, path := range []string{"", docsPath} {
		start := time.Now()
		resp, err := client.Get(p.URL() + path)
		if err != nil {
			t.Fatalf("GET /%s: %v", path, err)
		}
		resp.Body.Close()
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
	resp, _, err := post(t, throttled.URL()+docsPath)
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
	client := &http.Client{Timeout: 10 * time.Second}
	for _, path := range []string{"", "dbs/shop", "dbs/shop/colls/orders", "dbs/shop/colls/orders/pkranges"} {
		resp, err := client.Get(p.URL() + path)
		if err != nil {
			t.Fatalf("GET /%s: %v", path, err)
		}
		resp.Body.Close()
	}
	if c := p.Counts(); c.TotalFaults() != 0 || c.Metadata != 4 || c.Forwarded != 4 {
		t.Errorf("counts %+v, want 4 metadata reads forwarded, no fault", c)
	}
}

func TestProxyRewritesAccountEndpoints(t *testing.T) {
	up := newUpstream(t)
	p := startProxy(t, ProxyConfig{Upstream: up.URL})
	resp, err := http.Get(p.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var doc struct {
		Writable   []struct{ DatabaseAccountEndpoint string } `json:"writableLocations"`
		Readable   []struct{ DatabaseAccountEndpoint string } `json:"readableLocations"`
		MultiWrite *bool                                      `json:"enableMultipleWriteLocations"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil {
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
	client := &http.Client{Timeout: 10 * time.Second}
	const n = 400
	for range n {
		resp, err := client.Post(p.URL()+docsPath, "application/json", strings.NewReader(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
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
	client := &http.Client{Timeout: 10 * time.Second}
	send := func(body string) {
		resp, err := client.Post(p.URL()+docsPath, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	send(`{"id":"a"}`)
	send(`{"id":"a"}`)
	send(`{"id":"b"}`)
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
	resp, _, err := post(t, p.URL()+docsPath)
	if err != nil || resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("not picked: %v %v, want the rates' 429", resp, err)
	}
	pick = LostAnswer
	if _, _, err := post(t, keys); err == nil {
		t.Fatal("a lost answer was answered")
	}
	if up.hits.Load() != 1 {
		t.Errorf("upstream saw %d requests, want the one whose answer was lost", up.hits.Load())
	}
	pick = Drop
	if _, _, err := post(t, keys); err == nil || up.hits.Load() != 1 {
		t.Errorf("dropped: %v, upstream hits %d; want no answer and nothing forwarded", err, up.hits.Load())
	}
	if c := p.Counts(); c.Faults[LostAnswer] != 1 || c.Faults[Drop] != 1 || c.Faults[Throttle] != 1 {
		t.Errorf("faults %v", c.Faults)
	}
}
