package bench

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/ordersink/orders-consumer/handler"
)

// TestVariants: each throughput variant writes what it claims, with the
// requests it claims (one per message, no metadata), so the timed figures
// compare like with like; through the delay proxy too, where no operation
// comes back sooner than the latency it was sent across. Nothing here is
// timed.
func TestVariants(t *testing.T) {
	tests := []struct {
		latency  time.Duration
		settings Settings
		messages int
		width    int // of the plain loop beside the batch: batches at once × messages of one written at once
	}{
		{0, Settings{Concurrency: 4, BatchSize: 10, BatchConcurrency: 2, BatchParallelism: handler.DefaultBatchParallelism}, 40, 2 * 10},
		{5 * time.Millisecond, Settings{Concurrency: 4, BatchSize: 10, BatchConcurrency: 1, BatchParallelism: 5}, 20, 5},
	}
	for _, tc := range tests {
		t.Run(latencyName(tc.latency), func(t *testing.T) {
			lt, stop, err := AtLatency(target(t), tc.latency)
			if err != nil {
				t.Fatal(err)
			}
			defer stop()
			vs, closeVariants, err := Variants(lt, tc.settings)
			if err != nil {
				t.Fatal(err)
			}
			defer closeVariants()
			if len(vs) != numVariants {
				t.Fatalf("%d variants, want %d", len(vs), numVariants)
			}
			for i, v := range vs {
				checkVariant(t, v, fmt.Sprintf("TV-%s-%d", RunID(), i), tc.messages, tc.latency)
			}
			if w := vs[VarPlainBatchWide].Concurrency; w != tc.width {
				t.Errorf("the plain loop beside the batch runs %d at once, want the batch's width %d", w, tc.width)
			}
		})
	}
}

// checkVariant runs a phase of messages and wants every message written
// with one request, created where the variant has outcomes, and no
// operation faster than latency.
func checkVariant(t *testing.T, v *Variant, prefix string, messages int, latency time.Duration) {
	t.Helper()
	ph, err := v.RunPhase(context.Background(), prefix, messages)
	if err != nil {
		t.Fatal(err)
	}
	if ph.Errors != 0 || ph.Messages != messages {
		t.Errorf("%s: %d messages, %d errors (first %v)", v.Name, ph.Messages, ph.Errors, ph.FirstErr)
	}
	if got := float64(ph.Requests.Item()) / float64(ph.Messages); got != 1 || ph.Requests.ByKind[KindMetadata] != 0 {
		t.Errorf("%s: %.2f requests per message (%s), want 1 and no metadata", v.Name, got, ph.Requests.Detail(ph.Messages))
	}
	if v.outcomes != nil && !ph.Outcomes.Only("created", messages) {
		t.Errorf("%s: outcomes %s, want %d created", v.Name, ph.Outcomes, messages)
	}
	if len(ph.Latencies) == 0 {
		t.Errorf("%s: no latency measured", v.Name)
	} else if fastest := ph.Latencies[0]; latency > 0 && fastest < latency {
		t.Errorf("%s: an operation took %s, less than the %s latency", v.Name, fastest, latency)
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
