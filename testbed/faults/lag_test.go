package faults

import (
	"net/http"
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
	created, _, err := send(t, http.MethodPost, a+docsPath, anOrder)
	if err != nil {
		t.Fatal(err)
	}
	token := created.Header.Get(SessionHeader)
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
		read, _, err := send(t, http.MethodGet, s.base+docsPath+"/ORD-1", "", SessionHeader, s.token)
		if err != nil {
			t.Fatal(err)
		}
		if (read.StatusCode == http.StatusNotFound) != s.want404 {
			t.Errorf("%s read %d, want 404: %t", s.name, read.StatusCode, s.want404)
		}
	}
	if n := p.Counts().StaleReads; n != 1 {
		t.Errorf("%d stale reads, want 1", n)
	}
}
