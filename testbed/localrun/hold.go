package localrun

import (
	"fmt"
	"net/http"
	"path"
	"sync"
	"time"

	"github.com/ordersink/orders-consumer/testbed/chaos"
	"github.com/ordersink/orders-consumer/testbed/faults"
)

// completionHold keeps the completion of an idempotency key record (the
// ETag-conditional replace of its document, docs/contract.md §13) from
// reaching Cosmos until another request has read that record, or for at
// most max; once a read has released one, later completions pass, so that
// a demonstration's other requests are not held. The first request with a key is then provably still in flight
// when a second one with the key meets its `started` record, so the second
// is answered 409 whatever the machine's speed: make http-demo shows the
// in-flight answer this way instead of racing two requests. Nothing is
// faked: the handler, its claim and its read are the real ones; only the
// first request's last write waits.
type completionHold struct {
	records chaos.KeyRecords
	max     time.Duration
	logf    func(format string, args ...any)

	mu   sync.Mutex
	held map[string]chan struct{} // by document path
	met  bool                     // a read released a held completion
}

func newCompletionHold(keyContainer string, max time.Duration, logf func(string, ...any)) *completionHold {
	return &completionHold{records: chaos.NewKeyRecords(keyContainer), max: max, logf: logf, held: map[string]chan struct{}{}}
}

// proxy is the fault proxy configuration that applies the hold (no faults).
func (h *completionHold) proxy() *faults.ProxyConfig {
	return &faults.ProxyConfig{Hold: h.hold, Observe: h.observe}
}

// hold is faults.ProxyConfig.Hold: a replace of a key record waits.
func (h *completionHold) hold(method, p string, closing <-chan struct{}) {
	if method != http.MethodPut || !h.records.Match(p) {
		return
	}
	release := make(chan struct{})
	h.mu.Lock()
	if h.met {
		h.mu.Unlock()
		return
	}
	h.held[p] = release
	h.mu.Unlock()
	id := path.Base(p)
	h.logf("holding the completion of key record %s until another request reads the record (at most %s)", id, h.max)
	t := time.NewTimer(h.max)
	defer t.Stop()
	why := "another request read the record"
	select {
	case <-release:
	case <-t.C:
		why = fmt.Sprintf("no request read it within %s", h.max)
	case <-closing:
		why = "the proxy closed"
	}
	h.mu.Lock()
	if h.held[p] == release {
		delete(h.held, p)
	}
	h.mu.Unlock()
	h.logf("released the completion of key record %s: %s", id, why)
}

// observe is faults.ProxyConfig.Observe: Cosmos answered a read of a held
// record, so the reader has seen it `started`; its completion may go on.
func (h *completionHold) observe(x faults.Exchange) {
	if x.Method != http.MethodGet || !h.records.Match(x.Path) {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if release, ok := h.held[x.Path]; ok {
		close(release)
		delete(h.held, x.Path)
		h.met = true
	}
}
