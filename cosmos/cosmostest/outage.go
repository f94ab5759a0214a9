package cosmostest

import (
	"bytes"
	"encoding/json"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strconv"
	"sync/atomic"
)

// Fault is what an OutageProxy does to every request, the account read
// included.
type Fault int32

// The faults of an OutageProxy.
const (
	Up        Fault = iota // forward to Cosmos DB
	Refused                // reset the connection, as a host that is down
	Forbidden              // 403 substatus 5301, as while a role assignment propagates
	Silent                 // accept and never answer, as a blackholed network
	// ForbiddenData answers 403 to data-plane requests and lets the
	// account read through, as when an outage begins between a client's
	// first account read and its first request.
	ForbiddenData
	// SilentOnce holds the next data-plane request without answering, as
	// Silent, and lets every later one through (the fault becomes Up): one
	// hung attempt among answered ones.
	SilentOnce
)

// OutageProxy stands between a test's Store and Cosmos DB and can take the
// database away, for tests of outages. It rewrites the account's regional
// endpoints to itself, or the SDK would go around it after the first read.
type OutageProxy struct {
	srv      *httptest.Server
	fault    atomic.Int32
	upstream *url.URL
	closed   chan struct{}
	// Requests counts the requests that reached Cosmos DB.
	Requests atomic.Int64
	// Held counts the requests SilentOnce held.
	Held atomic.Int64
}

// StartOutageProxy starts a proxy to upstream on a loopback port.
func StartOutageProxy(upstream string) (*OutageProxy, error) {
	u, err := url.Parse(upstream)
	if err != nil {
		return nil, err
	}
	p := &OutageProxy{upstream: u, closed: make(chan struct{})}
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.ModifyResponse = p.rewriteAccount
	rp.ErrorLog = log.New(io.Discard, "", 0) // requests cut by their callers are expected here
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch Fault(p.fault.Load()) {
		case Refused:
			CloseConnection(w, true)
		case ForbiddenData:
			if r.Method == http.MethodGet && r.URL.Path == "/" {
				p.Requests.Add(1)
				rp.ServeHTTP(w, r)
				return
			}
			fallthrough
		case Forbidden:
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("x-ms-substatus", "5301")
			w.WriteHeader(http.StatusForbidden)
			_, _ = w.Write([]byte(`{"code":"Forbidden","message":"Request blocked by Auth: the principal does not have the required RBAC permissions (test)"}`))
		case SilentOnce:
			if r.Method == http.MethodGet && r.URL.Path == "/" || !p.fault.CompareAndSwap(int32(SilentOnce), int32(Up)) {
				p.Requests.Add(1)
				rp.ServeHTTP(w, r)
				return
			}
			p.Held.Add(1)
			fallthrough
		case Silent:
			select {
			case <-r.Context().Done():
			case <-p.closed:
			}
		default:
			p.Requests.Add(1)
			rp.ServeHTTP(w, r)
		}
	}))
	return p, nil
}

// URL is the endpoint to give the Store, http://127.0.0.1:port/.
func (p *OutageProxy) URL() string { return p.srv.URL + "/" }

// Set changes the fault for the requests that follow.
func (p *OutageProxy) Set(f Fault) { p.fault.Store(int32(f)) }

// Close ends silent requests and stops the proxy.
func (p *OutageProxy) Close() {
	close(p.closed)
	p.srv.CloseClientConnections()
	p.srv.Close()
}

func (p *OutageProxy) rewriteAccount(resp *http.Response) error {
	if resp.Request.Method != http.MethodGet || resp.Request.URL.Path != "/" {
		return nil
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return err
	}
	proxyHost := p.srv.Listener.Addr().String()
	var doc map[string]any
	if json.Unmarshal(b, &doc) == nil {
		b = bytes.ReplaceAll(b, []byte("//"+p.upstream.Host), []byte("//"+proxyHost))
		b = bytes.ReplaceAll(b, []byte("//localhost:"+p.upstream.Port()), []byte("//"+proxyHost))
	}
	resp.Body = io.NopCloser(bytes.NewReader(b))
	resp.ContentLength = int64(len(b))
	resp.Header.Set("Content-Length", strconv.Itoa(len(b)))
	return nil
}

// CloseConnection ends the client's connection without an answer: with a
// reset (RST) when reset is true, with an orderly close (FIN) otherwise.
func CloseConnection(w http.ResponseWriter, reset bool) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		panic(http.ErrAbortHandler)
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		return
	}
	if tc, ok := conn.(*net.TCPConn); ok && reset {
		_ = tc.SetLinger(0)
	}
	_ = conn.Close()
}
