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
		if !r.OK() {
			t.Errorf("%s: outcomes %s, want %d %s", r.Scenario, r.Outcomes, r.Messages, r.Want)
		}
		if got := r.PerMessage(); got != r.Floor || r.Counts[KindMetadata] != 0 {
			t.Errorf("%s: %.2f document requests per message (%s), want %.0f and no metadata", r.Scenario, got, r.Counts.Detail(r.Messages), r.Floor)
		}
		t.Logf("%-40s %.2f/msg  %s", r.Scenario, r.PerMessage(), r.Counts.Detail(r.Messages))
	}
	t.Logf("first message on a fresh client: %s", rep.First.Detail(1))
}
