package chaos

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/ordersink/orders-consumer/testbed/faults"
	"github.com/ordersink/orders-consumer/testbed/hostemu"
)

// maxExamples bounds the violations and accounted messages printed per check.
const maxExamples = 10

// Print writes the run's figures and the checks' results.
func (r *Report) Print(w io.Writer) {
	p := func(format string, args ...any) { fmt.Fprintf(w, format+"\n", args...) }
	in := r.Injected
	p("chaos run: seed %d, database %s, %s; fault rates per document request: %s", r.Seed, r.Database, r.Took.Round(100_000_000), r.Rates)
	p("  messages      %d (%.0f/s): %d orders (%d distinct valid orderIds), %d duplicates, %d bursts with %d concurrent copies, %d mismatches, %d invalid; %d messages lose a completion",
		r.Messages, float64(r.Messages)/max(r.Took.Seconds(), 0.001), in.Orders, r.Orders, in.Duplicates, in.Bursts, in.BurstCopies, in.Mismatches, in.Invalid, in.LostCompletions)
	pc := r.Proxy
	var injected []string
	for _, f := range faults.Faults {
		injected = append(injected, fmt.Sprintf("%s %d", f, pc.Faults[f]))
	}
	p("  faults        %d of %d document requests (%d requests in all, %d account/metadata reads never faulted): %s",
		pc.TotalFaults(), pc.Requests-pc.Metadata, pc.Requests, pc.Metadata, strings.Join(injected, ", "))
	p("                order creates Cosmos accepted whose answer was lost: %d, answered late: %d; upstream errors: %d; requests failed by outages: %d",
		r.UnseenCreates[faults.LostAnswer], r.UnseenCreates[faults.Slow], pc.UpstreamErrors, pc.OutageAnswers)
	var resent []string
	for _, f := range faults.Faults {
		if f != faults.Slow {
			resent = append(resent, fmt.Sprintf("after %s %d", f, pc.Resent[f]))
		}
	}
	p("  SDK retries   %d requests resent unchanged by the Cosmos SDK or net/http: %s", pc.TotalResent(), strings.Join(resent, ", "))
	p("  kills         %d SIGKILLs (%d requested), %d handler starts, %d restarts after functionTimeout, %d unexpected exits",
		r.Worker.Kills, r.KillsRequested, r.Worker.Starts, r.Worker.TimeoutRestarts, r.Worker.UnexpectedExits)
	s := r.Settlements
	p("  deliveries    %d: %d redeliveries (broker retries) = %d abandoned [%s] + %d lost completions + %d expired locks; %d dead-lettered",
		r.Deliveries, r.Deliveries-r.Messages, s[hostemu.Abandoned]+s[hostemu.DeadLettered], counts(r.Failures),
		s[hostemu.CompletionLost], s[hostemu.LockLost], s[hostemu.DeadLettered])
	p("  outcomes      per invocation, from the handler's log: %s", counts(r.Outcomes))
	if h := r.HTTP; h != nil {
		in := h.Injected
		p("  HTTP          %d orders posted to SubmitOrder under %d keys: %d first attempts timed out early, %d keys sent %d times at once, %d keys reused with another payload, %d orders again under a new key, %d raced by another client with other content",
			in.Orders, in.Keys, in.Timeouts, in.Concurrent, in.ConcurrentCopies, in.Reused, in.NewKeys, in.Races)
		p("                answers: %s", h.Answers)
		kf := h.KeyFaults
		p("                key completions hit: %d handler kills between the order's batch and the completion, %d lost answers after it stored it (%d aimed but missed); %d stale keys taken over, %d requests fenced (handler log)",
			kf.Kills, kf.LostAnswers, kf.Missed, h.TookOver, h.Fenced)
		for _, s := range kf.Skipped {
			p("                - missed: %s", s)
		}
	}
	if r.Publisher != nil {
		p("  publisher     %s", r.Publisher)
	}
	p("  final state   per message: %s; %d parking envelopes written (repeats after lost completions included)",
		counts(r.Final), r.Envelopes)
	f := r.Findings
	if f == nil {
		p("  checks        not run")
		return
	}
	p("  Cosmos        %s", counts(f.Documents))
	for i, rc := range f.Recoveries {
		p("  outage %d      %s", i+1, rc)
	}
	p("  checks")
	for _, c := range f.Checks {
		status := "ok  "
		if len(c.Violations) > 0 {
			status = "FAIL"
		}
		p("    %s %s (%d checked, %d violations)", status, c.Name, c.Checked, len(c.Violations))
		for i, v := range c.Violations {
			if i == maxExamples {
				p("           … %d more", len(c.Violations)-maxExamples)
				break
			}
			p("           - %s", v)
		}
	}
	p("    given up with a named reason: %d", len(f.Accounted))
	for i, a := range f.Accounted {
		if i == maxExamples {
			p("           … %d more", len(f.Accounted)-maxExamples)
			break
		}
		p("           - %s: %s, %s", a.MessageID, a.Reason, a.Detail)
	}
	if f.Atomic {
		p("    orders without their OrderAccepted outbox event: %d (violations: the batch is atomic)", len(f.OrdersWithoutEvent))
	} else {
		p("    orders without their OrderAccepted outbox event: %d (reported, not counted: the local emulator does not roll a transactional batch back; on Cosmos DB the order and its event commit together or not at all)",
			len(f.OrdersWithoutEvent))
	}
	for i, id := range f.OrdersWithoutEvent {
		if i == maxExamples {
			p("           … %d more", len(f.OrdersWithoutEvent)-maxExamples)
			break
		}
		p("           - %s", id)
	}
	p("  invariant violations = %d", f.Violations())
}

// counts prints a map of counters as "a 1, b 2", largest first.
func counts[K ~string](m map[K]int) string {
	keys := make([]K, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if m[keys[i]] != m[keys[j]] {
			return m[keys[i]] > m[keys[j]]
		}
		return keys[i] < keys[j]
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}
