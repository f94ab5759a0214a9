package bench

import (
	"fmt"
	"strings"
	"time"

	"github.com/ordersink/orders-consumer/testbed/faults"
)

// The throughput variants, in the order a round holds them.
const (
	VarPlainCreate = iota
	VarPlainBatch
	VarHandlerSingle
	VarHandlerDirect
	VarHandlerBatch
	// VarPlainBatchWide is the plain transactional batch loop with as many
	// writes at once as the batch variant has: what Cosmos gives at that
	// width without the handler.
	VarPlainBatchWide
	numVariants
)

// LatencyRun is the throughput rounds at one distance to Cosmos.
type LatencyRun struct {
	Latency time.Duration
	// Rounds[r][v] is variant v (Var...) in round r.
	Rounds [][]Phase
}

// AtLatency returns the target as seen from latency away: through a delay
// proxy (faults.ProxyConfig.Latency) on loopback that holds every answer of
// the emulator back that long, so a request holds its connection for the
// whole round trip, as it does against a real account. Zero returns t. The
// proxy runs in this process, so its CPU counts in the Go process's.
func AtLatency(t Target, latency time.Duration) (Target, func(), error) {
	if latency <= 0 {
		return t, func() {}, nil
	}
	p, err := faults.StartProxy(faults.ProxyConfig{Upstream: t.Endpoint, Latency: latency})
	if err != nil {
		return t, nil, fmt.Errorf("delay proxy for %s (a latency needs a loopback emulator; -latencies 0 measures the endpoint as it is): %w", latency, err)
	}
	t.Endpoint = p.URL()
	return t, func() { _ = p.Close() }, nil
}

// Variants builds every throughput variant over t, indexed by Var...; close
// releases their servers.
func Variants(t Target, s Settings) (vs []*Variant, close func(), err error) {
	makers := []func() (*Variant, error){
		VarPlainCreate:   func() (*Variant, error) { return PlainCreate(t, s.Concurrency) },
		VarPlainBatch:    func() (*Variant, error) { return PlainBatch(t, s.Concurrency) },
		VarHandlerSingle: func() (*Variant, error) { return Handler(t, 1, s.Concurrency, 0) },
		VarHandlerDirect: func() (*Variant, error) { return HandlerDirect(t, s.Concurrency) },
		VarHandlerBatch:  func() (*Variant, error) { return Handler(t, s.BatchSize, s.BatchConcurrency, s.BatchParallelism) },
		VarPlainBatchWide: func() (*Variant, error) {
			return PlainBatch(t, s.BatchConcurrency*min(s.BatchSize, s.BatchParallelism))
		},
	}
	close = func() {
		for _, v := range vs {
			v.Close()
		}
	}
	for _, mk := range makers {
		v, err := mk()
		if err != nil {
			close()
			return nil, nil, err
		}
		vs = append(vs, v)
	}
	return vs, close, nil
}

// ParseLatencies reads a list such as "0,5ms,20ms" (a bare number is
// milliseconds).
func ParseLatencies(list string) ([]time.Duration, error) {
	var out []time.Duration
	for _, f := range strings.Split(list, ",") {
		f = strings.TrimSpace(f)
		d, err := time.ParseDuration(f)
		if err != nil {
			d, err = time.ParseDuration(f + "ms")
		}
		if err != nil || d < 0 {
			return nil, fmt.Errorf("latency %q: want a duration such as 20ms", f)
		}
		out = append(out, d)
	}
	return out, nil
}

func latencyName(d time.Duration) string {
	return fmt.Sprintf("%g ms", float64(d.Microseconds())/1000)
}
