package localrun

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ordersink/orders-consumer/testbed/faults"
	"github.com/ordersink/orders-consumer/testbed/hostemu"
)

// holdRig is the fault proxy with a completionHold in front of a loopback
// stand-in for Cosmos; seen receives the requests that reach the stand-in,
// in order, and logs the hold's lines.
func holdRig(t *testing.T, max time.Duration) (proxyURL string, seen, logs chan string) {
	t.Helper()
	seen = make(chan string, 16)
	srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { seen <- r.Method + " " + r.URL.Path }))
	t.Cleanup(srv.Close)
	logs = make(chan string, 16)
	h := newCompletionHold("idempotency-keys", max, func(format string, args ...any) { logs <- fmt.Sprintf(format, args...) })
	cfg := h.proxy()
	cfg.Upstream = srv.URL
	p, err := faults.StartProxy(*cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return strings.TrimSuffix(p.URL(), "/"), seen, logs
}

// received returns the requests seen holds now.
func received(seen chan string) []string {
	var got []string
	for len(seen) > 0 {
		got = append(got, <-seen)
	}
	return got
}

func send(t *testing.T, method, url string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader("{}"))
	if err != nil {
		t.Error(err)
		return
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Error(err)
		return
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
}

const keyRecordPath = "/dbs/shop/colls/idempotency-keys/docs/0f1e2d"

func TestCompletionHoldWaitsForAReadOfTheRecord(t *testing.T) {
	base, seen, logs := holdRig(t, time.Minute)
	done := make(chan struct{})
	go func() {
		defer close(done)
		send(t, http.MethodPut, base+keyRecordPath)
	}()
	if l := <-logs; !strings.Contains(l, "holding the completion of key record 0f1e2d") {
		t.Fatalf("first log line %q", l)
	}
	// Requests on other documents and the record's claim pass the held
	// completion; so does a read of another record.
	send(t, http.MethodPost, base+"/dbs/shop/colls/idempotency-keys/docs")
	send(t, http.MethodGet, base+"/dbs/shop/colls/idempotency-keys/docs/other")
	send(t, http.MethodPut, base+"/dbs/shop/colls/orders/docs/0f1e2d")
	select {
	case <-done:
		t.Fatal("the completion went on before its record was read")
	default:
	}
	send(t, http.MethodGet, base+keyRecordPath)
	<-done
	if l := <-logs; !strings.Contains(l, "released the completion of key record 0f1e2d: another request read the record") {
		t.Errorf("release line %q", l)
	}
	got := received(seen)
	want := []string{
		"POST /dbs/shop/colls/idempotency-keys/docs",
		"GET /dbs/shop/colls/idempotency-keys/docs/other",
		"PUT /dbs/shop/colls/orders/docs/0f1e2d",
		"GET " + keyRecordPath,
		"PUT " + keyRecordPath,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("Cosmos saw\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// Once a read released one, later completions pass at once: the
	// demonstration's other requests are not held.
	send(t, http.MethodPut, base+keyRecordPath)
	select {
	case l := <-logs:
		t.Errorf("a later completion was held: %q", l)
	default:
	}
}

func TestCompletionHoldEndsAtItsMaximum(t *testing.T) {
	base, seen, logs := holdRig(t, 50*time.Millisecond)
	send(t, http.MethodPut, base+keyRecordPath)
	<-logs
	if l := <-logs; !strings.Contains(l, "no request read it within 50ms") {
		t.Errorf("release line %q", l)
	}
	if got := received(seen); len(got) != 1 || got[0] != "PUT "+keyRecordPath {
		t.Errorf("Cosmos saw %q, want the completion once", got)
	}
}

func TestHoldProxyStaysBelowSubmitDeadline(t *testing.T) {
	tests := []struct {
		environ []string
		hold    time.Duration
		err     string // "" : a proxy
	}{
		{nil, 0, ""},
		{nil, 10 * time.Second, ""},
		{nil, 20 * time.Second, "would outlast SUBMIT_DEADLINE (20s)"},
		{[]string{"SUBMIT_DEADLINE=5s"}, 5 * time.Second, "would outlast SUBMIT_DEADLINE (5s)"},
		{[]string{"SUBMIT_DEADLINE=soon"}, time.Second, `SUBMIT_DEADLINE "soon"`},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.environ, tt.hold), func(t *testing.T) {
			ss := &session{settings: hostemu.NewSettings(tt.environ), log: io.Discard}
			cfg, err := holdProxy(ss, tt.hold)
			switch {
			case tt.err != "":
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Errorf("error %v, want %q", err, tt.err)
				}
			case err != nil:
				t.Errorf("error %v", err)
			case (cfg != nil) != (tt.hold > 0):
				t.Errorf("proxy %v for a hold of %s", cfg, tt.hold)
			}
		})
	}
}
