package verify

import (
	"encoding/json"
	"maps"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/ordersink/orders-consumer/testbed/faults"
)

// Ledger is the proxy's witness of which content Cosmos accepted for each
// orderId: every order document a create or a batch wrote, as Cosmos
// answered it, including the answers the handler never received. It is the
// reference for "the first accepted payload": the content of the one create
// that succeeded, not the one the handler believes succeeded.
type Ledger struct {
	mu      sync.Mutex
	created map[string][]string // orderId -> requestHash of each create Cosmos answered 201
	// firstAt is when Cosmos answered the first successful create of each
	// orderId: the recovery figures after an outage are read from it.
	firstAt map[string]time.Time
	// unseen counts order creates that succeeded but whose answer the
	// handler did not get in time (LostAnswer) or got late (Slow).
	unseen map[faults.Fault]int
}

// NewLedger returns an empty ledger; pass its Observe to ProxyConfig.
func NewLedger() *Ledger {
	return &Ledger{created: map[string][]string{}, firstAt: map[string]time.Time{}, unseen: map[faults.Fault]int{}}
}

// Observe books the order documents an exchange created.
func (l *Ledger) Observe(x faults.Exchange) {
	if x.Method != http.MethodPost || !strings.HasSuffix(x.Path, "/docs") || x.Status/100 != 2 {
		return
	}
	var created [][]byte
	switch {
	case strings.EqualFold(x.Header.Get("x-ms-cosmos-is-batch-request"), "true"):
		created = faults.BatchCreates(x.Body, x.Answer)
	case strings.EqualFold(x.Header.Get("x-ms-documentdb-isquery"), "true"):
		return
	case x.Status == http.StatusCreated:
		created = append(created, x.Body)
	}
	now := time.Now()
	for _, doc := range created {
		var f DocHead
		if json.Unmarshal(doc, &f) != nil || f.Type != "order" {
			continue
		}
		l.mu.Lock()
		if _, seen := l.firstAt[f.OrderID]; !seen {
			l.firstAt[f.OrderID] = now
		}
		l.created[f.OrderID] = append(l.created[f.OrderID], f.RequestHash)
		if x.Fault == faults.LostAnswer || x.Fault == faults.Slow {
			l.unseen[x.Fault]++
		}
		l.mu.Unlock()
	}
}

// Created returns, per orderId, the requestHash of every order create
// Cosmos answered with 201: exactly one each when creates deduplicate.
func (l *Ledger) Created() map[string][]string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make(map[string][]string, len(l.created))
	for k, v := range l.created {
		out[k] = append([]string(nil), v...)
	}
	return out
}

// CreatedAt returns, per orderId, when Cosmos answered its first successful
// order create.
func (l *Ledger) CreatedAt() map[string]time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return maps.Clone(l.firstAt)
}

// Unseen returns how many successful order creates had their answer lost
// (LostAnswer) or held back (Slow).
func (l *Ledger) Unseen(f faults.Fault) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.unseen[f]
}
