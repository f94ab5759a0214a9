package faults

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ordersink/orders-consumer/cosmos/cosmostest"
)

// maxProxyBody bounds a request or answer held in memory; a Cosmos request
// is at most 2 MB.
const maxProxyBody = 8 << 20

// ProxyConfig configures a fault proxy.
type ProxyConfig struct {
	// Upstream is the Cosmos endpoint to forward to; it must be a loopback
	// http:// address, such as the local emulator's http://127.0.0.1:8081/.
	Upstream string
	// Rates are the fault probabilities per document request.
	Rates Rates
	// RetryAfter is the x-ms-retry-after-ms of a 429 (DefaultRetryAfter).
	RetryAfter time.Duration
	// SlowMin and SlowMax bound how long a Slow answer is held back
	// (default 200 ms to 2 s).
	SlowMin, SlowMax time.Duration
	// Lag, when positive, makes the proxy emulate Session consistency
	// across the instances whose listeners it serves (Listen): a point read
	// may be answered from before a write another instance made up to Lag
	// ago (replicas).
	Lag time.Duration
	// Latency holds back every answer Cosmos gave (metadata reads too) for
	// this long, as an account that far away would: the benchmarks measure
	// at the latency users see with it. Injected faults answer at once.
	Latency time.Duration
	// Seed seeds fault selection; 0 picks one at random. Each request's
	// fault is a function of the seed and of the request (schedule), so a
	// run reruns from its seed.
	Seed uint64
	// Hold, when set, is called with every request before it is forwarded
	// and may block to hold it back: the client waits and Cosmos has not
	// seen the request yet (a write still in flight). It gets a channel
	// that closes when the proxy closes and must return by then at the
	// latest. Called concurrently.
	Hold func(method, path string, closing <-chan struct{})
	// Pick, when set, chooses the fault of a document request before the
	// rates are rolled: a fault (>= 0) is injected as if rolled, -1 leaves
	// the request to the rates. It sees the request before Cosmos does
	// (make chaos's key faults aim at idempotency key completions this
	// way). Called concurrently.
	Pick func(instance int, method, path string, body []byte) Fault
	// Observe, when set, sees every exchange Cosmos answered, also those
	// whose answer the client never got. It is called concurrently.
	Observe func(Exchange)
}

// instanceKey tags a request's context with the instance whose listener it
// came through (Listen); 0 for the proxy's own.
type instanceKey struct{}

func instanceOf(r *http.Request) int {
	n, _ := r.Context().Value(instanceKey{}).(int)
	return n
}

// Exchange is one request Cosmos answered through the proxy.
type Exchange struct {
	Instance     int // whose listener it came through (Listen)
	Method, Path string
	Header       http.Header // the request's
	Body         []byte
	Status       int
	Answer       []byte
	// Fault is Slow or LostAnswer when the answer was held back or never
	// delivered, -1 otherwise.
	Fault Fault
}

// Proxy is a reverse proxy on loopback between a Cosmos client and a Cosmos
// endpoint that injects faults into document requests (reads, creates,
// batches, queries: every path under /docs). Account, database and container
// reads pass untouched: the SDK needs them to work at all, and the account
// read is rewritten so that the SDK keeps talking to the proxy.
type Proxy struct {
	cfg      ProxyConfig
	upstream *url.URL
	url      string // the proxy's own listener's
	client   *http.Client
	rates    atomic.Pointer[Rates]
	outage   atomic.Int32 // an OutageKind; 0: none
	closing  chan struct{}
	closeOne sync.Once

	mu      sync.Mutex
	servers []*http.Server // the proxy's own, then Listen's
	sched   schedule
	lag     *replicas // nil without Lag
	// faulted remembers requests that got a fault without a usable
	// answer, to recognise the client sending them again.
	faulted map[[sha256.Size]byte]Fault

	n proxyCounters
}

// StartProxy listens on 127.0.0.1 (a free port) and serves until Close.
func StartProxy(cfg ProxyConfig) (*Proxy, error) {
	up, err := url.Parse(cfg.Upstream)
	if err != nil || up.Scheme != "http" || !isLoopbackHost(up.Hostname()) {
		return nil, fmt.Errorf("fault proxy upstream %q: want an http:// loopback endpoint", cfg.Upstream)
	}
	if err := cfg.Rates.Validate(); err != nil {
		return nil, err
	}
	if cfg.RetryAfter <= 0 {
		cfg.RetryAfter = DefaultRetryAfter
	}
	if cfg.SlowMin <= 0 {
		cfg.SlowMin = 200 * time.Millisecond
	}
	if cfg.SlowMax < cfg.SlowMin {
		cfg.SlowMax = max(cfg.SlowMin, 2*time.Second)
	}
	seed := cfg.Seed
	if seed == 0 {
		seed = rand.Uint64()
	}
	p := &Proxy{
		cfg: cfg, upstream: up, closing: make(chan struct{}), faulted: map[[sha256.Size]byte]Fault{},
		sched: schedule{seed: seed, seen: map[[sha256.Size]byte]uint64{}},
		lag:   newReplicas(cfg.Lag, seed),
		client: &http.Client{
			Transport: &http.Transport{
				MaxIdleConns:        256,
				MaxIdleConnsPerHost: 128,
				IdleConnTimeout:     30 * time.Second,
				DisableCompression:  true,
			},
			// The upstream answer is read whole before the client hears
			// anything; a hung emulator must not hang the run.
			Timeout: 60 * time.Second,
			CheckRedirect: func(*http.Request, []*http.Request) error {
				return http.ErrUseLastResponse
			},
		},
	}
	p.rates.Store(&cfg.Rates)
	if p.url, err = p.Listen(0); err != nil {
		return nil, err
	}
	return p, nil
}

// URL is the endpoint clients use instead of the upstream, with a trailing
// slash like a Cosmos account endpoint.
func (p *Proxy) URL() string { return p.url }

// Listen opens a listener of the proxy for one instance of the handler
// (instance > 0; 0 is the proxy's own) and returns its URL: each
// instance's requests are told apart (Pick, Observe), as their clients are
// in Cosmos DB.
func (p *Proxy) Listen(instance int) (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("fault proxy: %w", err)
	}
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), instanceKey{}, instance)))
	})}
	p.mu.Lock()
	p.servers = append(p.servers, srv)
	p.mu.Unlock()
	go func() { _ = srv.Serve(ln) }()
	return "http://" + ln.Addr().String() + "/", nil
}

// Counts returns what the proxy did so far.
func (p *Proxy) Counts() ProxyCounts { return p.n.snapshot() }

// SetRates changes the fault rates from the next request on.
func (p *Proxy) SetRates(r Rates) error {
	if err := r.Validate(); err != nil {
		return err
	}
	p.rates.Store(&r)
	return nil
}

// Close stops listening, releases held-back answers and closes every
// connection.
func (p *Proxy) Close() error {
	p.closeOne.Do(func() { close(p.closing) })
	var errs []error
	p.mu.Lock()
	for _, srv := range p.servers {
		errs = append(errs, srv.Close())
	}
	p.mu.Unlock()
	p.client.CloseIdleConnections()
	return errors.Join(errs...)
}

func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.n.requests.Add(1)
	body, err := io.ReadAll(io.LimitReader(r.Body, maxProxyBody))
	if err != nil {
		// The client went away mid-request: nothing to forward.
		return
	}
	if p.serveOutage(w) {
		return
	}
	fault, slow := Fault(-1), time.Duration(0)
	if isDocumentPath(r.URL.Path) {
		var picked Fault = -1
		if p.cfg.Pick != nil {
			picked = p.cfg.Pick(instanceOf(r), r.Method, r.URL.Path, body)
		}
		fault, slow = p.roll(r, body, picked)
	} else {
		p.n.metadata.Add(1)
	}
	if p.answerUnsent(w, fault) {
		return
	}
	if p.lag != nil && p.lag.read(w, instanceOf(r), r) {
		p.n.staleReads.Add(1)
		return
	}
	if p.cfg.Hold != nil {
		p.cfg.Hold(r.Method, r.URL.Path, p.closing)
	}
	resp, answer, err := p.forward(r, body)
	if err != nil {
		p.n.upstreamErrors.Add(1)
		writeCosmosError(w, http.StatusBadGateway, "0", "BadGateway", "fault proxy: "+err.Error())
		return
	}
	if p.lag != nil {
		if token := p.lag.wrote(instanceOf(r), r, body, resp.StatusCode, answer); token != "" {
			resp.Header.Set(SessionHeader, token)
		}
	}
	p.n.forwarded.Add(1)
	if isAccountRead(r) && resp.StatusCode == http.StatusOK {
		answer = rewriteAccount(answer, r.Host)
	}
	if p.cfg.Observe != nil {
		p.cfg.Observe(Exchange{Instance: instanceOf(r), Method: r.Method, Path: r.URL.Path, Header: r.Header, Body: body,
			Status: resp.StatusCode, Answer: answer, Fault: fault})
	}
	switch fault {
	case LostAnswer:
		p.n.faults[fault].Add(1)
		cosmostest.CloseConnection(w, true)
		return
	case Slow:
		p.n.faults[fault].Add(1)
		p.hold(slow)
	}
	p.hold(p.cfg.Latency)
	h := w.Header()
	for k, vs := range resp.Header {
		if !hopByHop[http.CanonicalHeaderKey(k)] {
			h[k] = vs
		}
	}
	h.Set("Content-Length", strconv.Itoa(len(answer)))
	w.WriteHeader(resp.StatusCode)
	_, _ = w.Write(answer)
}

// answerUnsent answers a request whose fault keeps it from Cosmos, and
// reports whether it did.
func (p *Proxy) answerUnsent(w http.ResponseWriter, fault Fault) bool {
	if fault == Throttle || fault == Unavailable || fault == Timeout || fault == Drop {
		p.n.faults[fault].Add(1) // before the client can see the answer
	}
	switch fault {
	case Throttle:
		w.Header().Set("x-ms-retry-after-ms", strconv.FormatInt(p.cfg.RetryAfter.Milliseconds(), 10))
		writeCosmosError(w, http.StatusTooManyRequests, "3200", "TooManyRequests",
			"Request rate is large. More Request Units may be needed, so no changes were made. (injected by the fault proxy)")
	case Unavailable:
		writeCosmosError(w, http.StatusServiceUnavailable, "20001", "ServiceUnavailable",
			"Service is currently unavailable. (injected by the fault proxy)")
	case Timeout:
		writeCosmosError(w, http.StatusRequestTimeout, "0", "RequestTimeout",
			"Request timed out. (injected by the fault proxy)")
	case Drop:
		cosmostest.CloseConnection(w, false)
	default:
		return false
	}
	return true
}

// forward sends the request to Cosmos and reads the whole answer. It runs
// to the end even when the client hangs up: a request that reached the
// service is executed there whatever the client does.
func (p *Proxy) forward(r *http.Request, body []byte) (*http.Response, []byte, error) {
	u := *p.upstream
	u.Path, u.RawPath, u.RawQuery = r.URL.Path, r.URL.RawPath, r.URL.RawQuery
	req, err := http.NewRequestWithContext(context.WithoutCancel(r.Context()), r.Method, u.String(), bytes.NewReader(body))
	if err != nil {
		return nil, nil, err
	}
	for k, vs := range r.Header {
		if !hopByHop[http.CanonicalHeaderKey(k)] {
			req.Header[k] = vs
		}
	}
	req.ContentLength = int64(len(body))
	resp, err := p.client.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, maxProxyBody))
	if err != nil {
		return nil, nil, err
	}
	return resp, answer, nil
}

// roll picks the request's fault (and a slow answer's delay) from the
// schedule, unless picked says it (>= 0), and books a resend of a faulted
// request. It draws even for a picked request, so that a pick does not
// shift the draws of the requests after it.
func (p *Proxy) roll(r *http.Request, body []byte, picked Fault) (Fault, time.Duration) {
	key := requestKey(r, body)
	p.mu.Lock()
	defer p.mu.Unlock()
	if prev, ok := p.faulted[key]; ok {
		delete(p.faulted, key)
		p.n.resent[prev].Add(1)
	}
	roll, delay := p.sched.draw(r)
	f := p.rates.Load().pick(roll)
	if picked >= 0 {
		f = picked
	}
	if f >= 0 && f != Slow {
		p.faulted[key] = f
	}
	return f, p.cfg.SlowMin + time.Duration(delay*float64(p.cfg.SlowMax-p.cfg.SlowMin))
}

// requestKey identifies one operation of the client: the SDK sets
// x-ms-activity-id once per operation and keeps it, and the body, on its
// retries; a redelivered message makes a new operation.
func requestKey(r *http.Request, body []byte) [sha256.Size]byte {
	h := sha256.New()
	h.Write([]byte(r.Method + " " + r.URL.RequestURI() + " " + r.Header.Get("x-ms-activity-id") + "\n"))
	h.Write(body)
	var k [sha256.Size]byte
	h.Sum(k[:0])
	return k
}

// hold waits d, or until the proxy closes.
func (p *Proxy) hold(d time.Duration) {
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-p.closing:
	}
}

// rewriteAccount points the account's regional endpoints at host, the proxy
// listener the request came through. The SDK reads the account document
// once and then sends every request to the host:port of
// writableLocations/readableLocations, which would bypass the proxy.
func rewriteAccount(answer []byte, host string) []byte {
	var doc map[string]any
	dec := json.NewDecoder(bytes.NewReader(answer))
	dec.UseNumber()
	if dec.Decode(&doc) != nil {
		return answer
	}
	for _, key := range []string{"writableLocations", "readableLocations"} {
		locs, _ := doc[key].([]any)
		for _, l := range locs {
			loc, _ := l.(map[string]any)
			s, _ := loc["databaseAccountEndpoint"].(string)
			if u, err := url.Parse(s); err == nil && u.Host != "" {
				u.Host = host
				loc["databaseAccountEndpoint"] = u.String()
			}
		}
	}
	out, err := json.Marshal(doc)
	if err != nil {
		return answer
	}
	return out
}

// isDocumentPath reports whether a request addresses documents (a create, a
// batch, a point read, a query): /dbs/{db}/colls/{coll}/docs[/{id}].
func isDocumentPath(path string) bool {
	segs := strings.Split(strings.Trim(path, "/"), "/")
	return len(segs) >= 5 && segs[0] == "dbs" && segs[2] == "colls" && segs[4] == "docs"
}

func isAccountRead(r *http.Request) bool {
	return r.Method == http.MethodGet && (r.URL.Path == "/" || r.URL.Path == "")
}

// writeCosmosError answers like Cosmos DB does: the status, the sub-status
// header and a JSON body with code and message.
func writeCosmosError(w http.ResponseWriter, status int, subStatus, code, msg string) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("x-ms-substatus", subStatus)
	h.Set("x-ms-activity-id", "00000000-0000-0000-0000-000000000000")
	h.Set("x-ms-request-charge", "0")
	b, _ := json.Marshal(map[string]string{"code": code, "message": msg})
	h.Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

var hopByHop = map[string]bool{
	"Connection": true, "Keep-Alive": true, "Proxy-Connection": true, "Proxy-Authenticate": true,
	"Proxy-Authorization": true, "Te": true, "Trailer": true, "Transfer-Encoding": true, "Upgrade": true,
	"Content-Length": true,
}

func isLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
