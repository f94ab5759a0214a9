package pipetest

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// TestServesOnVirtualTime: an HTTP server and its client on the network run
// in a bubble, whose clock moves while a handler sleeps or a client waits:
// an hour-long answer takes no time, and a client's deadline ends a request
// the server holds.
func TestServesOnVirtualTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var n Network
		t.Cleanup(n.Close)
		ln, err := n.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-time.After(time.Hour):
			case <-r.Context().Done():
				return
			}
			_, _ = io.WriteString(w, "late")
		})}
		go func() { _ = srv.Serve(ln) }()
		t.Cleanup(func() { _ = srv.Close() })
		client := n.Client()
		start := time.Now()
		resp, err := client.Get("http://" + ln.Addr().String() + "/")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(b) != "late" || time.Since(start) != time.Hour {
			t.Errorf("answer %q after %s, want late after an hour", b, time.Since(start))
		}

		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+ln.Addr().String()+"/", nil)
		start = time.Now()
		if _, err := client.Do(req); !errors.Is(err, context.DeadlineExceeded) || time.Since(start) != time.Minute {
			t.Errorf("%v after %s, want the deadline after a minute", err, time.Since(start))
		}
	})
}

// TestDialWithoutListenerIsRefused: nothing listens, the dial fails at once.
func TestDialWithoutListenerIsRefused(t *testing.T) {
	var n Network
	if _, err := n.DialContext(context.Background(), "tcp", "127.0.0.1:1"); !errors.Is(err, ErrRefused) {
		t.Errorf("dial: %v, want %v", err, ErrRefused)
	}
	ln, _ := n.Listen("tcp", "127.0.0.1:7")
	if _, err := n.Listen("tcp", "127.0.0.1:7"); err == nil {
		t.Error("a second listener on one address")
	}
	ln.Close()
	if _, err := n.DialContext(context.Background(), "tcp", "127.0.0.1:7"); !errors.Is(err, ErrRefused) {
		t.Errorf("dial after close: %v, want %v", err, ErrRefused)
	}
}

// TestServeTakesTheBodyBeforeTheHandler: a handler that answers without
// reading the request's body (a fake server holding a request) still
// answers its client, as over a socket, whose buffer takes the body; on a
// bare pipe the client, still writing the body, met the closed pipe.
func TestServeTakesTheBodyBeforeTheHandler(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var n Network
		t.Cleanup(n.Drain)
		base := n.Serve(t, "127.0.0.1:8081", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusCreated)
		}))
		for i := range 1000 { // the closed pipe met one request in about 300 (virtual time: no wall time)
			resp, err := n.Client().Post(base+"/", "application/json", strings.NewReader(strings.Repeat("x", 64<<10)))
			if err != nil {
				t.Fatalf("request %d: %v, want the answer", i, err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusCreated {
				t.Fatalf("request %d: %s, want 201", i, resp.Status)
			}
		}
	})
}
