package bench

import (
	"fmt"
	"strings"
	"time"
)

// pathTotals is one HTTP API path over every round at every latency, as
// a row of the round-trip table, and its errors.
func (r *Report) pathTotals(path int) (row RoundTripRow, errors int) {
	fp := HTTPAPIPaths[path]
	row = RoundTripRow{Scenario: fp.Name, Want: fp.Want, Floor: fp.Floor, Outcomes: Outcomes{}}
	for _, lr := range r.HTTPAPI {
		for _, round := range lr.Rounds {
			ph := round[path]
			row.Messages += ph.Messages
			row.Counts.Add(ph.Requests)
			errors += ph.Errors
			for k, n := range ph.Outcomes {
				row.Outcomes[k] += n
			}
		}
	}
	return row, errors
}

func (r *Report) httpAPI(p func(string, ...any)) {
	if len(r.HTTPAPI) == 0 {
		return
	}
	s := r.Settings
	p("## HTTP API: round trips and latency of each path")
	p("")
	p("`SubmitOrder` and `GetOrder` as the host sends them (`hostemu.Encoder.HTTP`), %d requests per path", s.APIRequests)
	p("**one at a time**, %d rounds per distance. The **baseline** runs over a key store that keeps nothing.", s.APIRounds)
	p("")
	r.httpAPIComparison(p)
	p("### Round trips and request charge per request")
	p("")
	p("The charge sums `x-ms-request-charge` (the emulator reports a flat 1 RU per request).")
	p("")
	p("| path | outcomes | Cosmos requests per request | floor | RU per request | metadata | by kind and HTTP status |")
	p("|---|---|---:|---:|---:|---:|---|")
	for path := range HTTPAPIPaths {
		t, _ := r.pathTotals(path)
		if t.Messages == 0 {
			continue
		}
		p("| %s | %s | %.2f%s | %.0f | %.2f | %d | %s |", t.Scenario, t.Outcomes, t.PerMessage(), t.offFloor(),
			t.Floor, t.Counts.Charge()/float64(t.Messages), t.Counts.ByKind[KindMetadata], orDash(t.Counts.Detail(t.Messages)))
	}
	p("")
	p("p99 of %d requests is the %s slowest: the tail of this run, not of production traffic.",
		s.APIRequests, ordinal(s.APIRequests-int(0.99*float64(s.APIRequests-1))))
	for path := range HTTPAPIPaths {
		if _, errors := r.pathTotals(path); errors > 0 {
			p("- **Errors**: %s: %d", HTTPAPIPaths[path].Name, errors)
		}
	}
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

// httpAPIComparison states what each path costs now beside what it cost
// before issue 20, the table the section exists for.
func (r *Report) httpAPIComparison(p func(string, ...any)) {
	if base, _ := r.pathTotals(PathNoKeys); base.Messages == 0 {
		return
	}
	latencyColumns(p, r.HTTPAPI, "| path | Cosmos round trips, before → now | p50 / p99 ms at", "|---|---|", "---|", "")
	for path := range numPaths {
		t, _ := r.pathTotals(path)
		if t.Messages == 0 {
			continue
		}
		b, known := beforeIssue20[path]
		cells := make([]string, len(r.HTTPAPI))
		for i, lr := range r.HTTPAPI {
			st := lr.stats(path)
			cells[i] = fmt.Sprintf("%.1f → %.1f / %.1f → %.1f", b.p50[lr.Latency], median(st.p50), b.p99[lr.Latency], median(st.p99))
			if _, ok := b.p50[lr.Latency]; !ok {
				cells[i] = fmt.Sprintf("%.1f / %.1f", median(st.p50), median(st.p99))
			}
		}
		trips := fmt.Sprintf("%.0f", t.PerMessage())
		if known {
			trips = fmt.Sprintf("%d → %s", b.roundTrips, trips)
		}
		p("| %s | %s | %s |", t.Scenario, trips, strings.Join(cells, " | "))
	}
	p("")
	p("Before: issue 20's 202 design (`make bench` of 2026-12-01 11:29 UTC, commit e06ef17, this machine);")
	p("now the order's batch is inside the request. Why each path costs what it does: ADR 0012.")
	p("")
}

// ordinal names the n-th: "1st", "2nd", "3rd", "4th"...
func ordinal(n int) string {
	suffix := "th"
	switch {
	case n%100 >= 11 && n%100 <= 13:
	case n%10 == 1:
		suffix = "st"
	case n%10 == 2:
		suffix = "nd"
	case n%10 == 3:
		suffix = "rd"
	}
	return fmt.Sprintf("%d%s", n, suffix)
}

func orDash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}
