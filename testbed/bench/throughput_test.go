package bench

import (
	"context"
	"fmt"
	"testing"
	"time"
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
		{func() (*Variant, error) { return HandlerBatch(tg, 10, 2, 0) }, 1},
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

// TestVariantsAtLatency: through the delay proxy every variant still writes
// every message with one request each, and no operation comes back sooner
// than the latency it was sent across.
func TestVariantsAtLatency(t *testing.T) {
	const latency = 5 * time.Millisecond
	lt, stop, err := AtLatency(target(t), latency)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	vs, closeVariants, err := Variants(lt, Settings{Concurrency: 4, BatchSize: 10, BatchConcurrency: 1, BatchParallelism: 5})
	if err != nil {
		t.Fatal(err)
	}
	defer closeVariants()
	if len(vs) != numVariants {
		t.Fatalf("%d variants, want %d", len(vs), numVariants)
	}
	for i, v := range vs {
		ph, err := v.RunPhase(context.Background(), fmt.Sprintf("TL-%s-%d", RunID(), i), 20)
		if err != nil {
			t.Fatal(err)
		}
		if ph.Errors != 0 || ph.Messages != 20 || ph.Requests.Item() != 20 {
			t.Errorf("%s: %d messages, %d errors (first %v), requests %s", v.Name, ph.Messages, ph.Errors, ph.FirstErr, ph.Requests.Detail(ph.Messages))
		}
		if len(ph.Latencies) == 0 {
			t.Errorf("%s: no latency measured", v.Name)
			continue
		}
		if fastest := ph.Latencies[0]; fastest < latency {
			t.Errorf("%s: an operation took %s, less than the %s latency", v.Name, fastest, latency)
		}
	}
	if w := vs[VarPlainBatchWide].Concurrency; w != 5 {
		t.Errorf("the plain loop beside the batch runs %d at once, want the batch's width 5", w)
	}
}

func TestParseLatencies(t *testing.T) {
	got, err := ParseLatencies("0, 5ms,20")
	if err != nil || len(got) != 3 || got[0] != 0 || got[1] != 5*time.Millisecond || got[2] != 20*time.Millisecond {
		t.Errorf("ParseLatencies = %v, %v", got, err)
	}
	for _, bad := range []string{"", "soon", "-5ms"} {
		if _, err := ParseLatencies(bad); err == nil {
			t.Errorf("ParseLatencies(%q) accepted", bad)
		}
	}
}
