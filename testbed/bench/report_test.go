package bench

import (
	"strings"
	"testing"
	"time"
)

// fakeRound is one round in which every variant wrote 100 messages, the
// batch variant at batchRate and the others at 100 messages/s.
func fakeRound(batchRate float64) []Phase {
	round := make([]Phase, numVariants)
	for v := range round {
		round[v] = Phase{Variant: "variant " + string(rune('A'+v)), Messages: 100, Elapsed: time.Second,
			Latencies: []time.Duration{time.Millisecond}}
	}
	round[VarHandlerBatch].Elapsed = time.Duration(float64(time.Second) * 100 / batchRate)
	return round
}

func TestReportGivesEveryLatencyAndTheBatchVerdict(t *testing.T) {
	tests := []struct {
		name      string
		batchRate float64
		verdict   string
	}{
		{"batch faster", 150, "batch mode was at least as fast as single messages in this run (median ratio 1.50)"},
		{"batch slower", 50, "batch mode was slower than single messages in this run (median ratio 0.50)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := &Report{Settings: Settings{Rounds: 1, Concurrency: 16, BatchSize: 100, BatchConcurrency: 1, BatchParallelism: 64,
				Latencies: []time.Duration{0, 20 * time.Millisecond}},
				Throughput: []LatencyRun{{Latency: 0, Rounds: [][]Phase{fakeRound(100)}},
					{Latency: 20 * time.Millisecond, Rounds: [][]Phase{fakeRound(tc.batchRate)}}},
				Kept: []string{KeepBegin + "\n## Parsing\n\nkept by hand\n" + KeepEnd}}
			var b strings.Builder
			r.Markdown(&b)
			doc := b.String()
			for _, want := range []string{"| 0 ms | 20 ms |", "### At 0 ms", "### At 20 ms", "At 20 ms, " + tc.verdict,
				"At 20 ms, 16 requests in flight allow at most 800 messages/s; `ProcessOrder` reached 100 (12 %): held down by the CPU"} {
				if !strings.Contains(doc, want) {
					t.Errorf("report lacks %q", want)
				}
			}
			if k, rep := strings.Index(doc, "kept by hand"), strings.Index(doc, "## Reproduce"); k < 0 || k > rep {
				t.Errorf("kept section at %d, Reproduce at %d: want it kept, before Reproduce", k, rep)
			}
		})
	}
}

func TestKeptSections(t *testing.T) {
	old := strings.Join([]string{
		"# Benchmarks", "generated", KeepBegin, "## Parsing", "a | b", KeepEnd, "generated again",
		"  " + KeepBegin, "## Unterminated", "to the end",
	}, "\n")
	got := KeptSections(old)
	if len(got) != 2 {
		t.Fatalf("%d sections, want 2: %q", len(got), got)
	}
	if want := KeepBegin + "\n## Parsing\na | b\n" + KeepEnd; got[0] != want {
		t.Errorf("first section %q, want %q", got[0], want)
	}
	if !strings.Contains(got[1], "to the end") || !strings.HasSuffix(got[1], KeepEnd) {
		t.Errorf("unterminated section %q: want it kept to the end and closed", got[1])
	}
	if len(KeptSections("# Benchmarks\nnothing marked\n")) != 0 {
		t.Error("a report without markers kept something")
	}
}
