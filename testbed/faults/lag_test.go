package faults

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// A write is seen at once by the instance that made it and by a read
// presenting its session token; another instance reads the version before
// it (here: none, 404) until the write's lag has passed, and never goes
// back once it has read it.
func TestLaggingReplicas(t *testing.T) {
	up := newUpstream(t)
	p := startProxy(t, ProxyConfig{Upstream: up.URL, Lag: time.Second, Seed: 1})
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	p.lag.now = func() time.Time { return now }
	listen := func(n int) string {
		u, err := p.Listen(n)
		if err != nil {
			t.Fatal(err)
		}
		return u
	}
	a, b, c := listen(1), listen(2), listen(3)
	client := &http.Client{Timeout: 10 * time.Second}
	do := func(method, base, token string) *http.Response {
		t.Helper()
		path, body := docsPath+"/ORD-1", ""
		if method == http.MethodPost {
			path, body = docsPath, `{"id":"ORD-1","orderId":"ORD-1"}`
		}
		req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
		if token != "" {
			req.Header.Set(SessionHeader, token)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	token := do(http.MethodPost, a, "").Header.Get(SessionHeader)
	lag := p.lag.docs["/"+docsPath+"/ORD-1"][0].lag
	for _, s := range []struct {
		name, base, token string
		after             time.Duration
		want404           bool
	}{
		{"the writer", a, "", 0, false},
		{"another instance within the lag", b, "", lag / 2, true},
		{"another instance with the write's session token", c, token, 0, false},
		{"the instance with the token, later without it", c, "", 0, false},
		{"another instance past the lag", b, "", lag, false},
	} {
		now = now.Add(s.after)
		if got := do(http.MethodGet, s.base, s.token).StatusCode; (got == http.StatusNotFound) != s.want404 {
			t.Errorf("%s read %d, want 404: %t", s.name, got, s.want404)
		}
	}
	if n := p.Counts().StaleReads; n != 1 {
		t.Errorf("%d stale reads, want 1", n)
	}
}
