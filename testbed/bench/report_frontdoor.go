package bench

import (
	"fmt"
	"strings"
	"time"
)

// pathTotals is one front door path over every round at every latency.
type pathTotals struct {
	requests int
	counts   Counts
	outcomes Outcomes
	errors   int
}

func (r *Report) pathTotals(path int) pathTotals {
	t := pathTotals{counts: Counts{}, outcomes: Outcomes{}}
	for _, lr := range r.FrontDoor {
		for _, round := range lr.Rounds {
			ph := round[path]
			t.requests += ph.Messages
			t.counts.Add(ph.Requests)
			t.errors += ph.Errors
			for k, n := range ph.Outcomes {
				t.outcomes[k] += n
			}
		}
	}
	return t
}

// perRequest is the Cosmos requests (metadata excluded) per request.
func (t pathTotals) perRequest() float64 {
	if t.requests == 0 {
		return 0
	}
	return float64(t.counts.Item()) / float64(t.requests)
}

// addedByKeys is, within each round, the latency at quantile q of path less
// that of the baseline (PathNoKeys), in ms.
func (lr LatencyRun) addedByKeys(path int, q float64) []float64 {
	var out []float64
	for _, round := range lr.Rounds {
		out = append(out, ms(round[path].Percentile(q))-ms(round[PathNoKeys].Percentile(q)))
	}
	return out
}

func (r *Report) frontDoor(p func(string, ...any)) {
	if len(r.FrontDoor) == 0 {
		return
	}
	s := r.Settings
	p("## HTTP API: round trips and latency of each path")
	p("")
	p("`SubmitOrder` and `GetOrder` (docs/http-api.md) through the real handler: host-format invocations,")
	p("encoded by the local host emulator's `hostemu.Encoder.HTTP` from the functions' `function.json` as")
	p("the host sends them (`POST /api/orders` with `Idempotency-Key`, the caller's function key named in")
	p("`Identities`), posted over loopback HTTP to `handler.NewServer` with `executeOnce` over")
	p("`cosmos.KeyStore`. At each distance the paths write to a fresh database of their own. Each round")
	p("sends %d requests of every path **one at a time** (this section measures latency, not", s.FDRequests)
	p("throughput), after an untimed warm-up of 2, in %d rounds at each distance to Cosmos (the delay", s.FDRounds)
	p("proxy of the throughput section), rotating the order of the paths. What each path meets is set up")
	p("before the clock starts: for the replay, the resend under a new key, the orderId taken by another")
	p("client and GET, the order created by its first request (201).")
	p("")
	p("**Baseline**: the same handler and requests over an `idempotency.Store` that keeps nothing and sends")
	p("no request (`keptNowhere`: every claim succeeds): the admission by the queue path's rules")
	p("(docs/contract.md §3), the order's transactional batch and the answer. The difference to it is what")
	p("the key record costs: its Cosmos round trips and their latency.")
	p("")
	r.frontDoorVerdict(p)
	p("### Round trips and request charge per request")
	p("")
	p("Counted at the transport by `bench.Counter` as in the round-trip section above, over every round at")
	p("every distance; the request charge is the sum of the answers' `x-ms-request-charge` headers. The")
	p("local emulator reports a flat 1 RU per request, so here that column repeats the request count;")
	p("against an account (`COSMOS_ENDPOINT`) it is what Azure charges.")
	p("")
	p("| path | requests | outcomes | Cosmos requests per request | floor | request charge per request (RU) | metadata | requests by kind and HTTP status, per request |")
	p("|---|---:|---|---:|---:|---:|---:|---|")
	for path, fp := range HTTPAPIPaths {
		t := r.pathTotals(path)
		if t.requests == 0 {
			continue
		}
		mark := ""
		if !t.outcomes.Only(fp.Want, t.requests) || t.perRequest() != fp.Floor {
			mark = " **(off the floor)**"
		}
		p("| %s | %d | %s | %.2f%s | %.0f | %.2f | %d | %s |", fp.Name, t.requests, t.outcomes, t.perRequest(), mark,
			fp.Floor, t.counts.Charge()/float64(t.requests), t.counts[KindMetadata], orDash(t.counts.Detail(t.requests)))
	}
	p("")
	p("A first request claims the key (create 201), creates the order and its `OrderAccepted` event in one")
	p("transactional batch and completes the key (ETag-conditional replace 200): 3 sequential requests. A")
	p("replay finds the claim taken (create 409) and reads the record (read 200). A request under a new key")
	p("whose order exists meets the batch's 409, which carries no body, so it reads the stored order")
	p("before it completes its key: 4, whether the answer is 200 (the same client and content) or 409")
	p("`order-id-taken`. GET is one point read.")
	p("")
	for _, lr := range r.FrontDoor {
		where := "the emulator directly"
		if lr.Latency > 0 {
			where = "through the delay proxy"
		}
		p("### HTTP API at %s (%s)", latencyName(lr.Latency), where)
		p("")
		p("| path | p50 latency ms, median (range) | p99 latency ms, median (range) | p50 added to the baseline, ms | p99 added to the baseline, ms | errors |")
		p("|---|---|---|---|---|---:|")
		for path := range HTTPAPIPaths {
			st := lr.stats(path)
			added50, added99 := "–", "–"
			if path != PathNoKeys && path != PathGet {
				added50, added99 = spread(lr.addedByKeys(path, 0.5), "%+.1f"), spread(lr.addedByKeys(path, 0.99), "%+.1f")
			}
			p("| %s | %s | %s | %s | %s | %d |", st.name, spread(st.p50, "%.1f"), spread(st.p99, "%.1f"), added50, added99, st.errors)
		}
		p("")
	}
	p("GET has no baseline: it is not under executeOnce, and its point read is all it does.")
	p("p99 of %d requests is the %s slowest; read it as the tail of this run, not a percentile of", s.FDRequests, ordinal(s.FDRequests-int(0.99*float64(s.FDRequests-1))))
	p("production traffic. At a distance, every round trip waits that long at least: the latency is about")
	p("the round trips times the distance, plus the emulator's own time for each.")
	p("")
}

// beforeIssue20 are the figures of the HTTP API before issue 20 (SubmitOrder
// answered 202 and sent the order to the queue; GET answered `accepted` once
// the consumer stored it), measured by make bench on 2026-12-01 11:29 UTC at
// commit e06ef17 on this machine: Cosmos round trips and the median p50 and
// p99 latency in ms at 0, 5 and 20 ms. A resend under a new key and an
// orderId another client holds were first requests then (202, the conflict
// parked later by the consumer).
var beforeIssue20 = map[int]struct {
	roundTrips int
	p50, p99   map[time.Duration]float64
}{
	PathFirst:  {2, at(1.6, 14.7, 44.8), at(3.3, 16.9, 47.8)},
	PathReplay: {2, at(1.6, 13.8, 44.4), at(6.7, 17.4, 46.1)},
	PathResent: {2, at(1.6, 14.7, 44.8), at(3.3, 16.9, 47.8)},
	PathTaken:  {2, at(1.6, 14.7, 44.8), at(3.3, 16.9, 47.8)},
	PathGet:    {1, at(1.0, 7.8, 22.9), at(3.5, 9.3, 24.5)},
}

func at(ms0, ms5, ms20 float64) map[time.Duration]float64 {
	return map[time.Duration]float64{0: ms0, 5 * time.Millisecond: ms5, 20 * time.Millisecond: ms20}
}

// frontDoorVerdict states what each path costs now beside what it cost
// before issue 20, the table the section exists for.
func (r *Report) frontDoorVerdict(p func(string, ...any)) {
	base := r.pathTotals(PathNoKeys)
	if base.requests == 0 {
		return
	}
	p("| path | Cosmos round trips, before → now | %s |", strings.Join(latencyNames(r.FrontDoor), " | "))
	p("|---|---|%s", strings.Repeat("---|", len(r.FrontDoor)))
	for _, path := range []int{PathFirst, PathReplay, PathResent, PathTaken, PathGet} {
		t := r.pathTotals(path)
		if t.requests == 0 {
			continue
		}
		b := beforeIssue20[path]
		cells := make([]string, len(r.FrontDoor))
		for i, lr := range r.FrontDoor {
			st := lr.stats(path)
			cells[i] = fmt.Sprintf("p50 %.1f → %.1f ms, p99 %.1f → %.1f ms", b.p50[lr.Latency], medianOf(st.p50), b.p99[lr.Latency], medianOf(st.p99))
			if _, ok := b.p50[lr.Latency]; !ok {
				cells[i] = fmt.Sprintf("p50 %.1f ms, p99 %.1f ms", medianOf(st.p50), medianOf(st.p99))
			}
		}
		p("| %s | %d → %.0f | %s |", HTTPAPIPaths[path].Name, b.roundTrips, t.perRequest(), strings.Join(cells, " | "))
	}
	p("")
	p("Latency of the whole request (median of the rounds), before issue 20 (202 design, `make bench` of")
	p("2026-12-01 11:29 UTC, commit e06ef17, this machine) → now. The order's batch, which the consumer")
	p("used to make after the 202, is now inside the request: a first request makes 3 sequential Cosmos")
	p("requests where it made 2, and answers only once the order is stored.")
	p("")
}

func latencyNames(runs []LatencyRun) []string {
	out := make([]string, len(runs))
	for i, lr := range runs {
		out[i] = latencyName(lr.Latency)
	}
	return out
}

// ordinal names the n-th: "1st", "2nd", "3rd", "4th"...
func ordinal(n int) string {
	switch {
	case n%100 >= 11 && n%100 <= 13:
		return fmt.Sprintf("%dth", n)
	case n%10 == 1:
		return fmt.Sprintf("%dst", n)
	case n%10 == 2:
		return fmt.Sprintf("%dnd", n)
	case n%10 == 3:
		return fmt.Sprintf("%drd", n)
	}
	return fmt.Sprintf("%dth", n)
}

func orDash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}
