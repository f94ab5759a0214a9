// Package faults is what a chaos run does to the path between the handler
// and Cosmos DB: a reverse proxy that throttles, fails, delays, drops and
// loses answers at given rates, and outages in which it fails every request
// (testbed/chaos drives it; make run and the benchmarks use the proxy too).
package faults

import (
	"fmt"
	"strings"
	"sync/atomic"
	"time"
)

// Fault is one kind of failure the proxy injects into a Cosmos request.
type Fault int

// The faults, in the order a request's roll is matched against Rates.
const (
	// Throttle answers 429 with x-ms-retry-after-ms and sub-status 3200
	// (request rate too large); the request never reaches Cosmos.
	Throttle Fault = iota
	// Unavailable answers 503; the request never reaches Cosmos.
	Unavailable
	// Timeout answers 408; the request never reaches Cosmos.
	Timeout
	// Slow forwards the request and holds the answer back for a while: the
	// write happens, the answer may come after the client gave up.
	Slow
	// Drop reads the request and closes the connection without an answer;
	// the request never reaches Cosmos.
	Drop
	// LostAnswer forwards the request, waits for Cosmos's answer and then
	// resets the client's connection: the write succeeded, the client cannot
	// know it.
	LostAnswer
	numFaults
)

// Faults lists every fault kind.
var Faults = []Fault{Throttle, Unavailable, Timeout, Slow, Drop, LostAnswer}

var faultNames = [numFaults]string{"429-throttled", "503-unavailable", "408-timeout", "slow", "dropped", "lost-answer"}

func (f Fault) String() string {
	if f < 0 || f >= numFaults {
		return fmt.Sprintf("fault(%d)", int(f))
	}
	return faultNames[f]
}

// Rates are the probabilities that one document request gets each fault.
// Their sum must not exceed 1; what is left passes through untouched.
type Rates [numFaults]float64

// Uniform gives every fault the same rate.
func Uniform(rate float64) Rates {
	var r Rates
	for i := range r {
		r[i] = rate
	}
	return r
}

// Total is the probability that a document request gets any fault.
func (r Rates) Total() float64 { return sum(r) }

// Validate refuses negative rates and rates that add up past 1.
func (r Rates) Validate() error {
	for i, v := range r {
		if v < 0 || v > 1 {
			return fmt.Errorf("fault rate %s=%g: want 0 to 1", Fault(i), v)
		}
	}
	if t := r.Total(); t > 1+1e-9 {
		return fmt.Errorf("fault rates add up to %g: want at most 1", t)
	}
	return nil
}

// pick maps a uniform roll in [0,1) to a fault, or -1 for none.
func (r Rates) pick(roll float64) Fault {
	for i, v := range r {
		if roll < v {
			return Fault(i)
		}
		roll -= v
	}
	return -1
}

func (r Rates) String() string {
	parts := make([]string, 0, numFaults)
	for i, v := range r {
		parts = append(parts, fmt.Sprintf("%s=%g", Fault(i), v))
	}
	return strings.Join(parts, " ")
}

// ProxyCounts is what the proxy saw and did.
type ProxyCounts struct {
	// Requests is every request the proxy received; Metadata of them were
	// account, database and container reads, which never get faults.
	Requests, Metadata int64
	// Forwarded is how many requests reached Cosmos (Slow and LostAnswer
	// ones included).
	Forwarded int64
	// Faults counts the faults injected, by kind.
	Faults [numFaults]int64
	// Resent counts requests the client sent again unchanged (same method,
	// path, x-ms-activity-id and body) after a fault, by the fault: the
	// SDK's own retries and net/http's. A redelivered message is a
	// new operation with a new activity id, so it does not count here.
	Resent [numFaults]int64
	// UpstreamErrors counts requests Cosmos itself did not answer; the
	// client got 502.
	UpstreamErrors int64
	// OutageAnswers counts requests answered by an outage (reset or 403).
	OutageAnswers int64
	// StaleReads counts point reads answered from before a write, by a
	// lagging replica (ProxyConfig.Lag).
	StaleReads int64
}

// TotalResent is the number of requests resent after a fault.
func (c ProxyCounts) TotalResent() int64 { return sum(c.Resent) }

// TotalFaults is the number of faults injected.
func (c ProxyCounts) TotalFaults() int64 { return sum(c.Faults) }

// sum adds up a figure of each fault.
func sum[T int64 | float64](byFault [numFaults]T) T {
	var t T
	for _, v := range byFault {
		t += v
	}
	return t
}

type proxyCounters struct {
	requests, metadata, forwarded, upstreamErrors, outageAnswers, staleReads atomic.Int64
	faults, resent                                                           [numFaults]atomic.Int64
}

func (c *proxyCounters) snapshot() ProxyCounts {
	s := ProxyCounts{Requests: c.requests.Load(), Metadata: c.metadata.Load(),
		Forwarded: c.forwarded.Load(), UpstreamErrors: c.upstreamErrors.Load(), OutageAnswers: c.outageAnswers.Load(), StaleReads: c.staleReads.Load()}
	for i := range c.faults {
		s.Faults[i] = c.faults[i].Load()
		s.Resent[i] = c.resent[i].Load()
	}
	return s
}

// DefaultRetryAfter is the x-ms-retry-after-ms a Throttle answer carries:
// short, so the SDK's own retries (it honours the header) stay cheap.
const DefaultRetryAfter = 20 * time.Millisecond
