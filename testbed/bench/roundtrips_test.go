package bench

import "testing"

// TestRoundTripsAtTheFloor: every kind of message costs exactly the requests
// the design allows, and no metadata request once the client is warm. It
// counts requests, it does not time them.
func TestRoundTripsAtTheFloor(t *testing.T) {
	rep, err := RoundTrips(target(t), 5, 10)
	if err != nil {
		t.Fatal(err)
	}
	if rep.First.Item() != 1 {
		t.Errorf("first message: %d document requests (%s), want 1", rep.First.Item(), rep.First.Detail(1))
	}
	for _, r := range rep.Rows {
		atTheFloor(t, r.Scenario, r.Want, r.Floor, r.Messages, r.Outcomes, r.Counts)
		t.Logf("%-40s %.2f/msg  %s", r.Scenario, r.PerMessage(), r.Counts.Detail(r.Messages))
	}
	t.Logf("first message on a fresh client: %s", rep.First.Detail(1))
}

// atTheFloor wants each of n messages or requests to have got the outcome
// want and cost floor Cosmos requests, none of them metadata.
func atTheFloor(t *testing.T, name, want string, floor float64, n int, outcomes Outcomes, counts Counts) {
	t.Helper()
	if !outcomes.Only(want, n) {
		t.Errorf("%s: outcomes %s, want %d %s", name, outcomes, n, want)
	}
	if got := float64(counts.Item()) / float64(n); got != floor || counts.ByKind[KindMetadata] != 0 {
		t.Errorf("%s: %.2f Cosmos requests each (%s), want %.0f and no metadata", name, got, counts.Detail(n), floor)
	}
}
