package bench

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// Settings are the knobs of a run, printed with its figures.
type Settings struct {
	Target           string // what the Cosmos endpoint is, in words
	Rounds           int
	Messages         int // per variant per round
	Concurrency      int
	BatchSize        int
	BatchConcurrency int
	// BatchParallelism is the handler's BATCH_PARALLELISM in the batch
	// variant, and the width of the plain loop it is compared with.
	BatchParallelism int
	// Latencies are the distances to Cosmos the throughput rounds run at;
	// 0 is the emulator itself, the others a delay proxy in front of it.
	Latencies  []time.Duration
	RTMessages int
	RTBatch    int
	// APIRounds and APIRequests are the HTTP API's rounds and its
	// requests per path per round.
	APIRounds   int
	APIRequests int
	Starts      int
	FPMessages  int
	MicroCount  int
	Benchtime   string
}

// Report is everything one run of testbed/cmd/benchreport measured.
type Report struct {
	Settings          Settings
	Machine           Machine
	Started, Finished time.Time
	Micro             []MicroResult
	RoundTrips        *RoundTripReport
	// Throughput holds the rounds at each latency to Cosmos.
	Throughput []LatencyRun
	// HTTPAPI holds the HTTP API's rounds at each latency to Cosmos,
	// their phases indexed by Path....
	HTTPAPI   []LatencyRun
	Footprint *FootprintReport
	// Kept are sections of the previous docs/evidence/benchmarks.md that this run
	// does not measure (KeptSections), written back before "Reproduce".
	Kept []string
}

// Markdown writes docs/evidence/benchmarks.md: the figures of this run and
// how to reproduce them, nothing of earlier runs.
func (r *Report) Markdown(w io.Writer) {
	p := func(format string, args ...any) { fmt.Fprintf(w, format+"\n", args...) }
	s := r.Settings
	p("# Benchmarks")
	p("")
	p("Written by `make bench` on %s, commit %s, in %s: %s, %d cores, %.1f GiB, Linux %s, %s;",
		r.Started.UTC().Format("2006-01-02 15:04 MST"), r.Machine.Commit, r.Finished.Sub(r.Started).Round(time.Second),
		r.Machine.CPU, r.Machine.Cores, float64(r.Machine.MemoryKiB)/(1<<20), r.Machine.Kernel, r.Machine.Go)
	p("Cosmos DB: %s. Load average %s at the start, %s at the end.", s.Target, r.Machine.LoadStart, r.Machine.LoadEnd)
	p("")
	p("Timed figures: median of %d rounds (range), variants rotated within a round, ratios taken within a", s.Rounds)
	p("round. 0 ms is bound by the shared cores; 5 and 20 ms (a delay proxy before the emulator) by the")
	p("distance, as in a deployment. The emulator charges no RU and never throttles (no Azure 429s here).")
	p("")
	r.roundTrips(p)
	r.throughput(p)
	r.httpAPI(p)
	r.micro(p)
	r.footprint(p)
	for _, k := range r.Kept {
		p("%s", k)
		p("")
	}
	p("## Reproduce")
	p("")
	p("```sh")
	p("make bench            # rewrites this file; an emulator on port 18095 unless COSMOS_ENDPOINT is set")
	p("BENCH_FLAGS='-rounds 9 -out /tmp/b.md' make bench   # -only <sections> and every flag: go run ./testbed/cmd/benchreport -h")
	p("go test -run AtTheFloor -v ./testbed/bench           # the round-trip counts (asserted)")
	p("```")
	p("")
	p("This run: `-rounds %d -messages %d -concurrency %d -latencies %s -batch %d -batch-concurrency %d`",
		s.Rounds, s.Messages, s.Concurrency, latencyFlag(s.Latencies), s.BatchSize, s.BatchConcurrency)
	p("`-batch-parallelism %d -rt-messages %d -fd-rounds %d -fd-requests %d -starts %d -fp-messages %d -count %d -benchtime %s`.",
		s.BatchParallelism, s.RTMessages, s.APIRounds, s.APIRequests, s.Starts, s.FPMessages, s.MicroCount, s.Benchtime)
	if len(r.Kept) > 0 {
		p("Sections between `%s` and `%s` are not measured by `make bench`; it keeps them.", KeepBegin, KeepEnd)
	}
}

func (r *Report) roundTrips(p func(string, ...any)) {
	rt := r.RoundTrips
	if rt == nil {
		return
	}
	p("## Round trips per message")
	p("")
	p("Every request the SDK sends, retries included, counted at the transport (`bench.Counter`), messages")
	p("one at a time through `handler.NewServer`. A fresh client's first message also cost %s.", rt.First.Detail(1))
	p("The emulator answers a conflicting batch 200 (Azure: 207), so a duplicate shows `batch 200` + a read.")
	p("")
	p("| message | outcomes | Cosmos requests per message | floor | metadata | by kind and HTTP status |")
	p("|---|---|---:|---:|---:|---|")
	for _, row := range rt.Rows {
		p("| %s | %s | %.2f%s | %.0f | %d | %s |", row.Scenario, row.Outcomes, row.PerMessage(), row.offFloor(),
			row.Floor, row.Counts.ByKind[KindMetadata], row.Counts.Detail(row.Messages))
	}
	p("")
	p("### Beside the anchors")
	p("")
	p("Store calls per message; the anchors' from their documentation and code.")
	p("")
	get := func(name string) string {
		for _, row := range rt.Rows {
			if strings.HasPrefix(row.Scenario, name) {
				return fmt.Sprintf("%.0f", row.PerMessage())
			}
		}
		return "?"
	}
	p("| | new message | duplicate | same key, other content |")
	p("|---|---|---|---|")
	p("| **this consumer** (above) | **%s**: one transactional batch (order + outbox event) | **%s**: the batch (409) + a point read | **%s**: batch + read + conflict record |",
		get("new order"), get("duplicate"), get("mismatch"))
	p("| Microsoft Idempotent Consumer pattern [MS] | 1: create, or one batch | a failed create + a read | detected by a stored hash |")
	p("| AWS Lambda Powertools Idempotency [PT] | 2 writes: conditional put + update | a failed conditional put | only with payload validation |")
	p("| NServiceBus Outbox on Cosmos DB [NSB] | about 3: read + create + update, then a TTL delete | a read | not detected (MessageId only) |")
	p("")
	p("[MS] MicrosoftDocs/architecture-center `docs/patterns/idempotent-consumer.md`; [PT] aws-powertools/powertools-lambda-python")
	p("`docs/utilities/idempotency.md`, `persistence/dynamodb.py`; [NSB] Particular/docs.particular.net `nservicebus/outbox/index.md`,")
	p("`persistence/cosmosdb/index.md`, Particular/NServiceBus.Persistence.CosmosDB `Outbox/OutboxOperations.cs`.")
	p("")
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func us(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1000 }

// spread writes the median of s and its range: "1.2 (0.9–1.5)".
func spread(s []float64, format string) string {
	if len(s) == 0 {
		return "–"
	}
	return fmt.Sprintf(format+" ("+format+"–"+format+")", median(s), slices.Min(s), slices.Max(s))
}

// microPerMessage is the median time per message of an in-process
// benchmark (ns/msg when it reports one, else ns/op); 0 when it did not run.
func (r *Report) microPerMessage(name string) float64 {
	for _, m := range r.Micro {
		if m.Name != name {
			continue
		}
		if v, ok := m.Median("ns/msg"); ok {
			return v
		}
		v, _ := m.Median("ns/op")
		return v
	}
	return 0
}

func (r *Report) micro(p func(string, ...any)) {
	if len(r.Micro) == 0 {
		return
	}
	p("## CPU and allocations per message, in process")
	p("")
	p("`go test -run '^$' -bench . -benchmem -count %d -benchtime %s ./orders ./handler ./httpapi ./idempotency`,",
		r.Settings.MicroCount, r.Settings.Benchtime)
	p("median (range). Handler rows run over in-memory stores: the handler's own cost.")
	p("")
	p("| benchmark | what | time per op, median (range) | B/op | allocs/op |")
	p("|---|---|---|---:|---:|")
	what := map[string]string{
		"BenchmarkDecodeEnvelope":                  "the host's envelope",
		"BenchmarkParseOrder":                      "decode, fingerprint, validate",
		"BenchmarkFingerprint":                     "RFC 8785 form + SHA-256",
		"BenchmarkAcceptanceDocuments":             "order + outbox event",
		"BenchmarkProcessOrderInProcess/new":       "a new order",
		"BenchmarkProcessOrderInProcess/duplicate": "a duplicate",
		"BenchmarkProcessOrderBatchInProcess":      "100 new orders",
		"BenchmarkSubmitOrderInProcess/first":      "a key's first request",
		"BenchmarkSubmitOrderInProcess/replay":     "a replay",
		"BenchmarkSubmitOrderInProcess/keyReused":  "a reused key",
		"BenchmarkExecute/first":                   "executeOnce, first",
		"BenchmarkExecute/replay":                  "executeOnce, replay",
		"BenchmarkExecute/mismatch":                "executeOnce, reused key",
		"BenchmarkSubmitOrderInProcess/get":        "a GET by its owner",
	}
	for _, m := range r.Micro {
		ns, _ := m.Median("ns/op")
		lo, hi := m.Range("ns/op")
		b, _ := m.Median("B/op")
		a, _ := m.Median("allocs/op")
		p("| `%s` | %s | %s (%s–%s) | %.0f | %.0f |", m.Name, what[m.Name], dur(ns), dur(lo), dur(hi), b, a)
		if nsMsg, ok := m.Median("ns/msg"); ok {
			p("| ↳ per message | | %s | %.0f | %.0f |", dur(nsMsg), b/100, a/100)
		}
	}
	p("")
}

func dur(ns float64) string {
	switch {
	case ns >= 1e6:
		return fmt.Sprintf("%.2f ms", ns/1e6)
	case ns >= 1e3:
		return fmt.Sprintf("%.1f µs", ns/1e3)
	}
	return fmt.Sprintf("%.0f ns", ns)
}

func (r *Report) footprint(p func(string, ...any)) {
	f := r.Footprint
	if f == nil {
		return
	}
	p("## Footprint")
	p("")
	p("`bin/handler` started %d times, polled on `GET /` every %s; memory is `VmRSS` sampled every 10 ms.", len(f.Starts), f.PollEvery)
	p("")
	var ms []float64
	for _, d := range f.Starts {
		ms = append(ms, float64(d.Microseconds())/1000)
	}
	p("| | |")
	p("|---|---|")
	p("| start to first answer, median (range) | %s ms |", spread(ms, "%.1f"))
	p("| resident memory idle | %.1f MiB |", float64(f.IdleRSS)/1024)
	p("| highest under %d invocations at once (%d orders, %.0f messages/s) | %.1f MiB |",
		f.Concurrency, f.LoadPhase.Messages, f.LoadPhase.Rate(), float64(f.LoadPeakRSS)/1024)
	p("| handler CPU per message under that load | %.0f µs |", us(f.LoadPhase.CPUPerMessage(f.HandlerCPU)))
	p("| `VmHWM` after the load; resident 2 s later | %.1f MiB; %.1f MiB |", float64(f.HWM)/1024, float64(f.AfterRSS)/1024)
	if f.LoadPhase.Errors > 0 {
		p("| errors under load | %d, first: `%v` |", f.LoadPhase.Errors, f.LoadPhase.FirstErr)
	}
	p("")
}

// latencyFlag writes latencies as -latencies takes them.
func latencyFlag(ds []time.Duration) string {
	names := make([]string, len(ds))
	for i, d := range ds {
		names[i] = d.String()
	}
	return strings.Join(names, ",")
}
