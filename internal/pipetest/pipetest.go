// Package pipetest is a network in memory, made of net.Pipe connections, for
// tests that run on virtual time (testing/synctest). A goroutine blocked on a
// real socket is not durably blocked, so a bubble's clock would never move;
// one blocked on a pipe is. Servers listen on a Network and clients dial it
// by address, as they would on loopback.
package pipetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"
)

// Network holds listeners by address and every connection made on it.
type Network struct {
	mu        sync.Mutex
	listeners map[string]*Listener
	conns     []net.Conn
	nextPort  int
	closed    bool
}

// ErrRefused is the error of a dial to an address nobody listens on.
var ErrRefused = errors.New("connection refused")

// Listen listens on addr (host:port); port 0 picks a free one. The network
// name is ignored.
func (n *Network) Listen(_, addr string) (net.Listener, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return nil, net.ErrClosed
	}
	if n.listeners == nil {
		n.listeners, n.nextPort = map[string]*Listener{}, 40000
	}
	if port == "0" {
		for n.listeners[net.JoinHostPort(host, strconv.Itoa(n.nextPort))] != nil {
			n.nextPort++
		}
		port = strconv.Itoa(n.nextPort)
	}
	addr = net.JoinHostPort(host, port)
	if n.listeners[addr] != nil {
		return nil, fmt.Errorf("listen %s: address already in use", addr)
	}
	l := &Listener{net: n, addr: pipeAddr(addr), conns: make(chan net.Conn), done: make(chan struct{})}
	n.listeners[addr] = l
	return l, nil
}

// DialContext connects to the listener on addr, or fails with ErrRefused.
func (n *Network) DialContext(ctx context.Context, _, addr string) (net.Conn, error) {
	n.mu.Lock()
	l := n.listeners[addr]
	n.mu.Unlock()
	if l == nil {
		return nil, &net.OpError{Op: "dial", Net: "pipe", Addr: pipeAddr(addr), Err: ErrRefused}
	}
	client, server := net.Pipe()
	select {
	case l.conns <- server:
	case <-l.done:
		return nil, &net.OpError{Op: "dial", Net: "pipe", Addr: pipeAddr(addr), Err: ErrRefused}
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	n.mu.Lock()
	n.conns = append(n.conns, client, server)
	n.mu.Unlock()
	return client, nil
}

// Transport is an HTTP transport that dials the network, one connection
// per request: a kept-alive connection would stay blocked in its read loop
// when the test ends.
func (n *Network) Transport() *http.Transport {
	return &http.Transport{DialContext: n.DialContext, DisableKeepAlives: true}
}

// Client is an HTTP client over Transport.
func (n *Network) Client() *http.Client { return &http.Client{Transport: n.Transport()} }

// Close closes every listener and every connection made on the network, so
// that nothing stays blocked on it when a bubble ends.
func (n *Network) Close() {
	n.mu.Lock()
	n.closed = true
	ls, conns := n.listeners, n.conns
	n.listeners, n.conns = nil, nil
	n.mu.Unlock()
	for _, l := range ls {
		_ = l.Close()
	}
	for _, c := range conns {
		_ = c.Close()
	}
}

// Serve serves h on addr (host:port) until the test ends, and returns its
// base URL, http://addr. A test in a bubble registers Drain before it.
//
// h gets the request once its body is read: a pipe has no buffer, so a
// handler that answers without reading the body (a fake Cosmos DB holding a
// request) would leave the client blocked writing it, and the server's
// close after the answer would fail the request with a closed pipe, where
// a socket's buffer would have taken the body. This holds for every server
// started by Serve, the handler's own test harness included (not for a
// server a test runs itself on Listen); a handler that reads the body as
// it streams in is not what these tests look at.
func (n *Network) Serve(t testing.TB, addr string, h http.Handler) string {
	t.Helper()
	ln, err := n.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		h.ServeHTTP(w, r)
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return "http://" + addr
}

// Drain closes the network, then lets the bubble's clock run on for an
// hour, so that what served or dialled on it has stopped before the bubble
// ends (goroutines asleep must not outlive it): net/http sleeps 500 ms
// before it drops a connection it hung up, azcosmos goes on retrying a
// request its caller gave up on. Call it only inside a synctest bubble,
// where the hour takes no time; a test registers it first (t.Cleanup), so
// that it runs after the servers' own cleanups.
func (n *Network) Drain() {
	n.Close()
	time.Sleep(time.Hour)
}

// Listener is a net.Listener on a Network.
type Listener struct {
	net   *Network
	addr  pipeAddr
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

// Accept waits for the next dial.
func (l *Listener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

// Close stops accepting; the address is free again.
func (l *Listener) Close() error {
	l.once.Do(func() {
		close(l.done)
		l.net.mu.Lock()
		if l.net.listeners[string(l.addr)] == l {
			delete(l.net.listeners, string(l.addr))
		}
		l.net.mu.Unlock()
	})
	return nil
}

// Addr is the address the listener was given (host:port).
func (l *Listener) Addr() net.Addr { return l.addr }

type pipeAddr string

func (pipeAddr) Network() string  { return "pipe" }
func (a pipeAddr) String() string { return string(a) }
