package bench

import (
	"context"
	"testing"
)

// TestHTTPAPIPathsAtTheFloor: every path of the HTTP API gets the
// answer it is named after for each request and costs exactly the Cosmos
// requests the design allows, the baseline none, with no metadata request
// once the clients are warm. It counts requests, it does not time them.
func TestHTTPAPIPathsAtTheFloor(t *testing.T) {
	vs, closeVariants, err := HTTPAPIVariants(target(t))
	if err != nil {
		t.Fatal(err)
	}
	defer closeVariants()
	if len(vs) != numPaths {
		t.Fatalf("%d variants, want one per path (%d)", len(vs), numPaths)
	}
	run := RunID()
	for p, v := range vs {
		path := HTTPAPIPaths[p]
		ph, err := v.RunPhase(context.Background(), "FD-"+run+"-"+string(rune('a'+p)), 3)
		if err != nil {
			t.Fatal(err)
		}
		if ph.Errors > 0 {
			t.Errorf("%s: %d errors, first: %v", path.Name, ph.Errors, ph.FirstErr)
		}
		atTheFloor(t, path.Name, path.Want, path.Floor, 3, ph.Outcomes, ph.Requests)
		if ph.Requests.Item() > 0 && ph.Requests.Charge() <= 0 {
			t.Errorf("%s: %d Cosmos requests and no request charge counted", path.Name, ph.Requests.Item())
		}
		t.Logf("%-70s %s  %.1f RU", path.Name, ph.Requests.Detail(3), ph.Requests.Charge()/3)
	}
}
