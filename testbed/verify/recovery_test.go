package verify

import (
	"strings"
	"testing"
	"time"

	"github.com/ordersink/orders-consumer/testbed/faults"
	"github.com/ordersink/orders-consumer/testbed/hostemu"
)

func TestMeasureRecovery(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 7, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	o := faults.OutageRecord{Outage: faults.Outage{Kind: faults.Unreachable, For: time.Minute}, Start: at(10), End: at(70)}
	created := map[string]time.Time{
		"before": at(5),  // created before the outage: not held, though delivered again in it
		"held-1": at(71), // the first create after the outage
		"held-2": at(73), // the last held order created
		"late":   at(72), // created after, first delivered after: not held
	}
	span := func(from, to float64) Span { return Span{at(from), at(to)} }
	delivered := map[string][]Span{
		"before": {span(4, 4.1), span(20, 20.1)},
		"held-1": {span(8, 70.6)}, // in flight before the outage, held through it
		"held-2": {span(65, 73)},
		"late":   {span(71.5, 72)},
		"lost":   {span(40, 41)}, // held, never created, given up on
		"gone":   {span(2, 9.9)}, // ended before the outage: not held
	}
	r := measureRecovery(o, created, delivered, map[string]bool{"lost": true})
	// before (20), held-1, held-2 and lost are in flight during it.
	want := Recovery{OutageRecord: o, HeldDeliveries: 4, Held: 3, HeldCreated: 2, HeldGivenUp: 1, FirstCreate: time.Second, LastHeldCreate: 3 * time.Second}
	if r != want {
		t.Errorf("recovery\n got %+v\nwant %+v", r, want)
	}
	if r := measureRecovery(o, map[string]time.Time{"before": at(5)}, delivered, nil); r.FirstCreate >= 0 || r.LastHeldCreate >= 0 {
		t.Errorf("no create after the outage: first %s last %s, want both negative", r.FirstCreate, r.LastHeldCreate)
	}
}

// The incident checks on the small scenario: a valid order dead-lettered or
// parked RetryBudgetExhausted fails the first; the recovery check fails when
// no order, or only a late one, is created after an outage.
func TestIncidentChecks(t *testing.T) {
	deadLettered := func(s *scenario) {
		inv := invocation(s.a2, "", "")
		inv.Status, inv.Failure, inv.Settlements = 503, "the handler answered 503", []hostemu.Settlement{hostemu.DeadLettered}
		s.invs[1] = inv
	}
	outage := func(firstCreate time.Duration) func(s *scenario) {
		return func(s *scenario) {
			start := time.Now()
			for _, inv := range s.invs {
				inv.Started, inv.Took = start.Add(time.Second), time.Second
			}
			end := start.Add(time.Minute)
			s.outages = []faults.OutageRecord{{Outage: faults.Outage{Kind: faults.Forbidden, For: time.Minute}, Start: start, End: end}}
			s.createdAt = map[string]time.Time{"ORD-1": end.Add(firstCreate)}
		}
	}
	for _, tt := range []spoiled{
		{"dead-lettered", deadLettered, []string{"no valid order parked"}, "was dead-lettered after 1 deliveries"},
		{"exhausted", func(s *scenario) { s.invs[0] = invocation(s.a, "RetryBudgetExhausted", "") }, []string{"no valid order parked"}, "parked RetryBudgetExhausted"},
		{"recovered in time", outage(2 * time.Second), nil, ""},
		{"recovered late", outage(6 * time.Second), []string{"orders created again within 5s"}, "first order was created 6s after"},
		{"never recovered", outage(-time.Second), []string{"orders created again within 5s"}, "no order was created after it"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, f := tt.run(t)
			if f.Violations() != len(tt.checks) {
				t.Errorf("%d violations, want one in each failing check", f.Violations())
			}
			if len(f.Recoveries) != len(s.outages) || len(s.outages) > 0 && f.Recoveries[0].Held != 1 {
				t.Errorf("recoveries %+v, want one for the outage, holding ORD-1", f.Recoveries)
			}
		})
	}
}

func TestClockCheck(t *testing.T) {
	if c := clockCheck(5, hostemu.QueueCounts{}, hostemu.WorkerStats{Kills: 2}); len(c.Violations) != 0 || c.Checked != 5 {
		t.Errorf("no expiry, no timeout: %+v", c)
	}
	c := clockCheck(5, hostemu.QueueCounts{ExpiredLocks: 3}, hostemu.WorkerStats{TimeoutRestarts: 1})
	if len(c.Violations) != 2 || !strings.Contains(c.Violations[0], "3 deliveries lost their lock") ||
		!strings.Contains(c.Violations[1], "1 invocations passed functionTimeout") {
		t.Errorf("violations %q, want the expired locks and the timeout named", c.Violations)
	}
}
