package bench

import (
	"context"
	"testing"
)

// TestVariantsWriteEveryMessage: each throughput variant writes what it
// claims, with the requests it claims, so the timed figures compare like
// with like. Nothing here is timed.
func TestVariantsWriteEveryMessage(t *testing.T) {
	tg := target(t)
	mk := []struct {
		new      func() (*Variant, error)
		requests float64
	}{
		{func() (*Variant, error) { return PlainCreate(tg, 4) }, 1},
		{func() (*Variant, error) { return PlainBatch(tg, 4) }, 1},
		{func() (*Variant, error) { return HandlerSingle(tg, 4) }, 1},
		{func() (*Variant, error) { return HandlerDirect(tg, 4) }, 1},
		{func() (*Variant, error) { return HandlerBatch(tg, 10, 2) }, 1},
	}
	for i, m := range mk {
		v, err := m.new()
		if err != nil {
			t.Fatal(err)
		}
		ph, err := v.RunPhase(context.Background(), "TV-"+RunID()+"-"+string(rune('a'+i)), 40)
		v.Close()
		if err != nil {
			t.Fatal(err)
		}
		if ph.Errors != 0 || ph.Messages != 40 {
			t.Errorf("%s: %d messages, %d errors (first %v)", v.Name, ph.Messages, ph.Errors, ph.FirstErr)
		}
		if got := float64(ph.Requests.Item()) / float64(ph.Messages); got != m.requests || ph.Requests[KindMetadata] != 0 {
			t.Errorf("%s: %.2f requests per message (%s), want %.0f", v.Name, got, ph.Requests.Detail(ph.Messages), m.requests)
		}
		if v.outcomes != nil && !ph.Outcomes.Only("created", 40) {
			t.Errorf("%s: outcomes %s, want 40 created", v.Name, ph.Outcomes)
		}
	}
}
