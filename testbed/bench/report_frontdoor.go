package bench

import (
	"fmt"
	"strings"
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
	p("## HTTP front door: what executeOnce adds to a request")
	p("")
	p("`SubmitOrder` and `GetOrder` (docs/http-api.md) through the real handler: host-format invocations,")
	p("encoded by the local host emulator's `hostemu.Encoder.HTTP` from the functions' `function.json` as")
	p("the host sends them (`POST /api/orders` with `Idempotency-Key` and `X-Functions-Key`), posted over")
	p("loopback HTTP to `handler.NewServer` with `executeOnce` over `cosmos.KeyStore`. At each distance the")
	p("paths write to a fresh database of their own: the emulators ignore a query's partition key and scan")
	p("the container (docs/cosmos-emulators.md), so a GET beside the throughput rounds' orders would measure")
	p("that scan; here it scans the section's own few thousand documents. Each round sends %d requests", s.FDRequests)
	p("of every path **one at a time** (this section measures latency, not throughput), after an untimed")
	p("warm-up of 2, in %d rounds at each distance to Cosmos (the delay proxy of the throughput section),", s.FDRounds)
	p("rotating the order of the paths. What each path meets is set up before the clock starts: for the")
	p("replay and the reused key, the key's first request answered 202; for in flight, a `started` record")
	p("claimed as a first request claims it, its lease a minute ahead; for GET, the first request answered")
	p("(no consumer runs, so no order document) or the order stored by `ProcessOrder`.")
	p("")
	p("**Baseline**: the same handler and requests over an `idempotency.Store` that keeps nothing and sends")
	p("no request (`keptNowhere`: every claim succeeds). `SubmitOrder` refuses to run without a key")
	p("service (500), so this is the nearest to \"without executeOnce\": the admission by the queue path's")
	p("rules (docs/contract.md §3), the order output (the given-back envelope of §7) and the answer, plus")
	p("`Execute`'s own bookkeeping in memory (`BenchmarkExecute`, in the in-process table below).")
	p("The difference to it is what the key record costs: its Cosmos round trips and their latency.")
	p("")
	p("### Round trips and request charge per request")
	p("")
	p("Counted at the transport by `bench.Counter` as in the round-trip section above, over every round at")
	p("every distance; the request charge is the sum of the answers' `x-ms-request-charge` headers. The")
	p("local emulator reports a flat 1 RU per request, so here that column repeats the request count;")
	p("against an account (`COSMOS_ENDPOINT`) it is what Azure charges.")
	p("")
	p("| path | requests | outcomes | Cosmos requests per request | floor | request charge per request (RU) | metadata | requests by kind and HTTP status, per request |")
	p("|---|---:|---|---:|---:|---:|---:|---|")
	for path, fp := range FrontDoorPaths {
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
	p("A first request claims the key (create 201) and completes it (ETag-conditional replace 200); every")
	p("later request with the key finds the claim taken (create 409) and reads the record (read 200) to")
	p("judge it: replay, another payload, or still running. GET reads the order's partition (a query on")
	p("the partition key) and, when the consumer has not stored the order yet, the caller's key record")
	p("naming it (a query across the key container's partitions). The emulator has one partition; on an")
	p("account whose key container has several physical partitions, the gateway may answer that query a")
	p("page at a time, one round trip each: there a GET of a submitted order can cost more than its floor.")
	p("")
	r.frontDoorVerdict(p)
	for _, lr := range r.FrontDoor {
		where := "the emulator directly"
		if lr.Latency > 0 {
			where = "through the delay proxy"
		}
		p("### Front door at %s (%s)", latencyName(lr.Latency), where)
		p("")
		p("| path | p50 latency ms, median (range) | p99 latency ms, median (range) | p50 added to the baseline, ms | p99 added to the baseline, ms | errors |")
		p("|---|---|---|---|---|---:|")
		for path := range FrontDoorPaths {
			st := lr.stats(path)
			added50, added99 := "–", "–"
			if path != PathNoKeys && path != PathGetSubmitted && path != PathGetAccepted {
				added50, added99 = spread(lr.addedByKeys(path, 0.5), "%+.1f"), spread(lr.addedByKeys(path, 0.99), "%+.1f")
			}
			p("| %s | %s | %s | %s | %s | %d |", st.name, spread(st.p50, "%.1f"), spread(st.p99, "%.1f"), added50, added99, st.errors)
		}
		p("")
	}
	p("GET has no baseline: it is not under executeOnce, and its queries are all it does. The GET of a")
	p("submitted order is slower than its two round trips alone at 0 ms: the emulator scans the key")
	p("container for it, which grows through the rounds; an account serves that query from the index.")
	p("p99 of %d requests is the %s slowest; read it as the tail of this run, not a percentile of", s.FDRequests, ordinal(s.FDRequests-int(0.99*float64(s.FDRequests-1))))
	p("production traffic. At a distance, every round trip waits that long at least: the added latency")
	p("is about the round trips times the distance, plus the emulator's own time for each.")
	p("")
}

// frontDoorVerdict states what executeOnce adds at each distance, the
// sentence the section exists for.
func (r *Report) frontDoorVerdict(p func(string, ...any)) {
	first, base := r.pathTotals(PathFirst), r.pathTotals(PathNoKeys)
	if first.requests == 0 || base.requests == 0 {
		return
	}
	var at []string
	for _, lr := range r.FrontDoor {
		at = append(at, fmt.Sprintf("%.1f ms p50 / %.1f ms p99 at %s", medianOf(lr.addedByKeys(PathFirst, 0.5)),
			medianOf(lr.addedByKeys(PathFirst, 0.99)), latencyName(lr.Latency)))
	}
	p("**executeOnce adds %.0f Cosmos round trips (%.2f RU as the endpoint reported them) and %s to a first `SubmitOrder`",
		first.perRequest()-base.perRequest(), (first.counts.Charge()/float64(first.requests))-(base.counts.Charge()/float64(base.requests)),
		strings.Join(at, ", "))
	p("request** (median of the rounds of the difference to the baseline within each round; the tables")
	p("below give the ranges and the other paths).")
	p("")
	p("| added to a `SubmitOrder` request by executeOnce | Cosmos round trips | %s |", strings.Join(latencyNames(r.FrontDoor), " | "))
	p("|---|---:|%s", strings.Repeat("---|", len(r.FrontDoor)))
	for _, path := range []int{PathFirst, PathReplay, PathKeyReused, PathInFlight} {
		t := r.pathTotals(path)
		cells := make([]string, len(r.FrontDoor))
		for i, lr := range r.FrontDoor {
			cells[i] = fmt.Sprintf("p50 %+.1f ms, p99 %+.1f ms", medianOf(lr.addedByKeys(path, 0.5)), medianOf(lr.addedByKeys(path, 0.99)))
		}
		p("| %s | %.0f | %s |", FrontDoorPaths[path].Name, t.perRequest()-base.perRequest(), strings.Join(cells, " | "))
	}
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
