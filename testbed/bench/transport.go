package bench

import (
	"fmt"
	"maps"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Request kinds, from the Cosmos DB REST path and headers.
const (
	KindCreate   = "create"   // POST .../docs
	KindBatch    = "batch"    // POST .../docs, x-ms-cosmos-is-batch-request
	KindQuery    = "query"    // POST .../docs, x-ms-documentdb-isquery
	KindRead     = "read"     // GET .../docs/{id}
	KindReplace  = "replace"  // PUT .../docs/{id}
	KindPatch    = "patch"    // PATCH .../docs/{id}
	KindDelete   = "delete"   // DELETE .../docs/{id}
	KindMetadata = "metadata" // account (GET /), database, container, partition key ranges
)

// Counter is an http.RoundTripper that counts the requests it forwards by
// kind and answer status, and adds up the request charge (RU) their answers
// report. Every attempt counts, the SDK's own retries too: that is what a
// round trip costs.
type Counter struct {
	Next http.RoundTripper

	mu       sync.Mutex
	counts   map[string]int // "kind" and "kind status"
	charge   float64        // x-ms-request-charge of every answer
	inFlight int
	peak     int
}

// NewCounter wraps next.
func NewCounter(next http.RoundTripper) *Counter {
	return &Counter{Next: next, counts: map[string]int{}}
}

// RoundTrip forwards the request and counts it.
func (c *Counter) RoundTrip(r *http.Request) (*http.Response, error) {
	kind := Classify(r)
	c.mu.Lock()
	c.inFlight++
	c.peak = max(c.peak, c.inFlight)
	c.mu.Unlock()
	resp, err := c.Next.RoundTrip(r)
	status, charge := "error", 0.0
	if err == nil {
		status = strconv.Itoa(resp.StatusCode)
		// Failed answers (409, 412) carry a charge too.
		charge, _ = strconv.ParseFloat(resp.Header.Get("x-ms-request-charge"), 64)
	}
	c.mu.Lock()
	c.inFlight--
	c.charge += charge
	c.counts[kind]++
	c.counts[kind+" "+status]++
	c.mu.Unlock()
	return resp, err
}

// Snapshot returns the counts so far and resets them.
func (c *Counter) Snapshot() Counts {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := Counts{ByKind: c.counts, Peak: c.peak, milliRU: int(math.Round(c.charge * 1000))}
	c.counts = map[string]int{}
	c.peak, c.charge = c.inFlight, 0
	return out
}

// Counts are the requests a Counter forwarded.
type Counts struct {
	// ByKind counts them by kind ("batch") and by kind and status
	// ("batch 200").
	ByKind map[string]int
	// Peak is the most requests that were outstanding at once.
	Peak int
	// milliRU is the request charge the answers reported, summed, in
	// thousandths of an RU (so that sums add up exactly).
	milliRU int
}

// Charge is the request charge (RU) the answers reported, summed.
func (c Counts) Charge() float64 { return float64(c.milliRU) / 1000 }

// Add adds the counts of o to c; the peak is the higher of the two.
func (c *Counts) Add(o Counts) {
	if c.ByKind == nil {
		c.ByKind = map[string]int{}
	}
	for k, v := range o.ByKind {
		c.ByKind[k] += v
	}
	c.Peak = max(c.Peak, o.Peak)
	c.milliRU += o.milliRU
}

// Item is the number of requests that touch documents: everything but
// metadata.
func (c Counts) Item() int {
	n := 0
	for _, k := range []string{KindCreate, KindBatch, KindQuery, KindRead, KindReplace, KindPatch, KindDelete} {
		n += c.ByKind[k]
	}
	return n
}

// Detail lists the counts by kind and status divided by per, such as
// "batch 200 ×1, read 200 ×1", in a stable order.
func (c Counts) Detail(per int) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(c.ByKind)) {
		if strings.Contains(k, " ") {
			parts = append(parts, fmt.Sprintf("%s ×%.3g", k, float64(c.ByKind[k])/float64(per)))
		}
	}
	return strings.Join(parts, ", ")
}

// itemKinds are the kinds of the requests on one document, by method.
var itemKinds = map[string]string{
	http.MethodGet:    KindRead,
	http.MethodPut:    KindReplace,
	http.MethodPatch:  KindPatch,
	http.MethodDelete: KindDelete,
}

// Classify names the kind of a Cosmos DB REST request.
func Classify(r *http.Request) string {
	p := strings.TrimSuffix(r.URL.Path, "/")
	segs := strings.Split(strings.TrimPrefix(p, "/"), "/")
	// dbs/{db}/colls/{coll}/docs[/{id}]
	if len(segs) < 5 || segs[0] != "dbs" || segs[2] != "colls" || segs[4] != "docs" {
		return KindMetadata
	}
	switch {
	case len(segs) > 5:
		if kind, ok := itemKinds[r.Method]; ok {
			return kind
		}
	case strings.EqualFold(r.Header.Get("x-ms-cosmos-is-batch-request"), "true"):
		return KindBatch
	case strings.EqualFold(r.Header.Get("x-ms-documentdb-isquery"), "true"),
		strings.HasPrefix(r.Header.Get("Content-Type"), "application/query+json"):
		return KindQuery
	case r.Method == http.MethodPost:
		return KindCreate
	}
	return KindMetadata // read feed, or another method on a document
}
