package bench

import (
	"errors"
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

// failedOnce marks one error in the round's variant B, which the short
// report has no per-latency table to show in.
func failedOnce(round []Phase) []Phase {
	round[1].Errors, round[1].FirstErr = 1, errors.New("create order ORD-1: 503")
	return round
}

func TestReportGivesEveryLatencyAndTheBatchComparison(t *testing.T) {
	tests := []struct {
		name       string
		batchRate  float64
		comparison string
	}{
		{"batch faster", 150, "batch mode was at least as fast as single messages in this run (median ratio 1.50)"},
		{"batch slower", 50, "batch mode was slower than single messages in this run (median ratio 0.50)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := &Report{Settings: Settings{Rounds: 1, Concurrency: 16, BatchSize: 100, BatchConcurrency: 1, BatchParallelism: 64,
				Latencies: []time.Duration{0, 20 * time.Millisecond}},
				Throughput: []LatencyRun{{Latency: 0, Rounds: [][]Phase{fakeRound(100)}},
					{Latency: 20 * time.Millisecond, Rounds: [][]Phase{failedOnce(fakeRound(tc.batchRate))}}},
				Kept: []string{KeepBegin + "\n## Parsing\n\nkept by hand\n" + KeepEnd}}
			doc := r.markdown()
			for _, want := range []string{"| 0 ms | 20 ms |", "At 20 ms, " + tc.comparison,
				"- **Errors**: variant B at 20 ms: 1, first: `create order ORD-1: 503`",
				"At 20 ms, 16 in flight allow 800 messages/s; `ProcessOrder` reached 100 (12 %): held down by the CPU"} {
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

// fakeHTTPAPIRound is one HTTP API round of 4 requests per path: each
// at its floor, taking lat(path) each, with the emulator's flat 1 RU per
// Cosmos request.
func fakeHTTPAPIRound(lat func(path int) time.Duration) []Phase {
	round := make([]Phase, numPaths)
	for path, fp := range HTTPAPIPaths {
		round[path] = Phase{Variant: fp.Name, Messages: 4, Elapsed: time.Second,
			Latencies: []time.Duration{lat(path), lat(path), lat(path), lat(path)},
			Outcomes:  Outcomes{fp.Want: 4}, Requests: Counts{}}
		if n := int(fp.Floor) * 4; n > 0 {
			round[path].Requests = Counts{ByKind: map[string]int{KindRead: n, KindRead + " 200": n}, milliRU: n * 1000}
		}
	}
	return round
}

func TestReportStatesWhatEachHTTPPathCosts(t *testing.T) {
	flat := func(ms float64) func(int) time.Duration {
		return func(path int) time.Duration {
			if path == PathNoKeys {
				return time.Millisecond
			}
			return time.Duration((1 + ms) * float64(time.Millisecond))
		}
	}
	offFloor := fakeHTTPAPIRound(flat(2))
	offFloor[PathReplay].Requests = Counts{ByKind: map[string]int{KindRead: 12, KindRead + " 200": 12}}
	r := &Report{Settings: Settings{APIRounds: 3, APIRequests: 4},
		HTTPAPI: []LatencyRun{
			{Latency: 0, Rounds: [][]Phase{fakeHTTPAPIRound(flat(1)), fakeHTTPAPIRound(flat(2)), fakeHTTPAPIRound(flat(9))}},
			{Latency: 20 * time.Millisecond, Rounds: [][]Phase{offFloor}},
		}}
	doc := r.markdown()
	for _, want := range []string{
		"| path | Cosmos round trips, before → now | p50 / p99 ms at 0 ms | 20 ms |",
		"| " + HTTPAPIPaths[PathFirst].Name + " | 2 → 3 | 1.6 → 3.0 / 3.3 → 3.0 | 44.8 → 3.0 / 47.8 → 3.0 |",
		"| " + HTTPAPIPaths[PathGet].Name + " | 1 → 1 | 1.0 → 3.0 / 3.5 → 3.0 | 22.9 → 3.0 / 24.5 → 3.0 |",
		"| " + HTTPAPIPaths[PathNoKeys].Name + " | created 16 | 1.00 | 1 | 1.00 | 0 | read 200 ×1 |",
		"| " + HTTPAPIPaths[PathFirst].Name + " | created 16 | 3.00 | 3 | 3.00 | 0 | read 200 ×3 |",
		"| " + HTTPAPIPaths[PathReplay].Name + " | replayed 16 | 2.25 **(off the floor)** | 2 | 1.50 | 0 | read 200 ×2.25 |",
		"| " + HTTPAPIPaths[PathGet].Name + " | found 16 | 1.00 | 1 | 1.00 | 0 | read 200 ×1 |",
		"| " + HTTPAPIPaths[PathNoKeys].Name + " | 1 | 1.0 / 1.0 | 1.0 / 1.0 |",
		"p99 of 4 requests is the 2nd slowest",
	} {
		if !strings.Contains(doc, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if f, m := strings.Index(doc, "## HTTP API"), strings.Index(doc, "## Reproduce"); f < 0 || f > m {
		t.Errorf("HTTP API section at %d, Reproduce at %d", f, m)
	}
	if strings.Contains((&Report{}).markdown(), "## HTTP API") {
		t.Error("a report without HTTP API rounds has the section")
	}
}

func (r *Report) markdown() string {
	var b strings.Builder
	r.Markdown(&b)
	return b.String()
}
