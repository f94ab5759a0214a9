package cosmostest

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/ordersink/orders-consumer/cosmos"
)

// Exchange is one request a Store sent and the status it got back.
type Exchange struct {
	// Kind is READ, REPLACE, CREATE, BATCH, QUERY or the HTTP method of
	// anything else (account and container metadata).
	Kind    string
	Path    string
	IfMatch string // the request's If-Match header
	ETag    string // the answer's ETag header
	Status  int
	Faked   bool // answered by Before, not by Cosmos
}

// Transport sits between a Store and its Cosmos endpoint: it records every
// exchange, and lets a test act before a request is forwarded (write a
// competing document, delete one) or answer in Cosmos's place with what the
// emulators never send (a 404 from a lagging replica, a 424 batch).
type Transport struct {
	Base http.RoundTripper

	mu        sync.Mutex
	before    func(kind string, r *http.Request) *http.Response
	exchanges []Exchange
}

// NewTransport returns a Transport over a fresh default transport.
func NewTransport() *Transport {
	return &Transport{Base: http.DefaultTransport.(*http.Transport).Clone()}
}

// Before installs f, called before each request is forwarded; when it
// returns an answer, that answer is the request's and nothing is forwarded.
func (t *Transport) Before(f func(kind string, r *http.Request) *http.Response) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.before = f
}

// Exchanges returns the exchanges so far whose Kind is one of kinds (all
// when kinds is empty).
func (t *Transport) Exchanges(kinds ...string) []Exchange {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []Exchange
	for _, e := range t.exchanges {
		if len(kinds) == 0 || contains(kinds, e.Kind) {
			out = append(out, e)
		}
	}
	return out
}

// RoundTrip implements http.RoundTripper.
func (t *Transport) RoundTrip(r *http.Request) (*http.Response, error) {
	kind := kindOf(r)
	t.mu.Lock()
	before := t.before
	t.mu.Unlock()
	var resp *http.Response
	if before != nil {
		resp = before(kind, r)
	}
	faked := resp != nil
	if resp == nil {
		var err error
		if resp, err = t.Base.RoundTrip(r); err != nil {
			return nil, err
		}
	}
	t.mu.Lock()
	t.exchanges = append(t.exchanges, Exchange{Kind: kind, Path: r.URL.Path, IfMatch: r.Header.Get("If-Match"),
		ETag: resp.Header.Get("ETag"), Status: resp.StatusCode, Faked: faked})
	t.mu.Unlock()
	return resp, nil
}

func kindOf(r *http.Request) string {
	isDoc := strings.Contains(r.URL.Path, "/docs/")
	switch {
	case r.Method == http.MethodGet && isDoc:
		return "READ"
	case r.Method == http.MethodPut && isDoc:
		return "REPLACE"
	case r.Method == http.MethodPost && strings.EqualFold(r.Header.Get("x-ms-cosmos-is-batch-request"), "true"):
		return "BATCH"
	case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/docs") && strings.HasPrefix(r.Header.Get("Content-Type"), "application/query+json"):
		return "QUERY"
	case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/docs"):
		return "CREATE"
	}
	return r.Method
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// Answer is a Cosmos-shaped answer to r: status, a JSON body, the headers the
// SDK reads.
func Answer(r *http.Request, status int, body string) *http.Response {
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("x-ms-activity-id", "faked-by-cosmostest")
	h.Set("x-ms-request-charge", "1")
	return &http.Response{StatusCode: status, Status: fmt.Sprintf("%d %s", status, http.StatusText(status)),
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, Header: h, Request: r,
		Body: io.NopCloser(strings.NewReader(body)), ContentLength: int64(len(body))}
}

// StoreVia opens a Store on the Env's database whose requests pass through
// t, and warms it up (account and container metadata), so that exchanges
// recorded afterwards are the operations' own.
func (e *Env) StoreVia(t *Transport) (*cosmos.Store, error) {
	o := e.Options()
	o.Transport = t
	store, err := cosmos.Open(o, e.Database, e.Container)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := store.PartitionDocuments(ctx, "warm-up"); err != nil {
		return nil, fmt.Errorf("warm up store: %w", err)
	}
	return store, nil
}
