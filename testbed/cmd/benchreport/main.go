// Command benchreport measures the consumer and writes docs/evidence/benchmarks.md:
// Cosmos round trips per message, throughput through the handler against a
// plain azcosmos loop, batch against single invocations, what executeOnce
// adds to a request of the HTTP API, CPU and allocations in process,
// and the footprint of bin/handler. `make bench` runs it with an
// emulator; COSMOS_ENDPOINT and COSMOS_KEY name the endpoint.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/ordersink/orders-consumer/handler"
	"github.com/ordersink/orders-consumer/testbed/bench"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "benchreport:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer) error {
	fs := flag.NewFlagSet("benchreport", flag.ContinueOnError)
	var (
		out     = fs.String("out", "docs/evidence/benchmarks.md", "the Markdown file to write")
		bin     = fs.String("bin", "bin/handler", "the handler executable (make build)")
		target  = fs.String("target", "", "what the Cosmos endpoint is, for the report")
		only    = fs.String("only", "micro,roundtrips,throughput,httpapi,footprint", "sections to run")
		s       bench.Settings
		rawPath = fs.String("raw", "", "also write the raw go test -bench output here")
		cpuProf = fs.String("cpuprofile", "", "write a CPU profile of the throughput rounds here")
		emuPID  = fs.Int("emulator-pid", 0, "the Cosmos emulator's process id, to measure its CPU time per message")
	)
	fs.IntVar(&s.Rounds, "rounds", 5, "throughput rounds")
	fs.IntVar(&s.Messages, "messages", 2000, "messages per variant per round")
	fs.IntVar(&s.Concurrency, "concurrency", 16, "operations in flight (host.json maxConcurrentCalls)")
	fs.IntVar(&s.BatchSize, "batch", 100, "messages per batch invocation (host.json maxMessageBatchSize)")
	fs.IntVar(&s.BatchConcurrency, "batch-concurrency", 1, "batch invocations in flight (the host's listener: 1)")
	fs.IntVar(&s.BatchParallelism, "batch-parallelism", handler.DefaultBatchParallelism, "the handler's BATCH_PARALLELISM in the batch variant")
	latencies := fs.String("latencies", "0,5ms,20ms", "distances to Cosmos for the throughput and HTTP API rounds (a delay proxy in front of the emulator)")
	fs.IntVar(&s.RTMessages, "rt-messages", 20, "messages per round-trip row")
	fs.IntVar(&s.RTBatch, "rt-batch", 100, "messages in the round-trip batch invocation")
	fs.IntVar(&s.APIRounds, "fd-rounds", 5, "HTTP API rounds")
	fs.IntVar(&s.APIRequests, "fd-requests", 50, "HTTP API requests per path per round, sent one at a time")
	fs.IntVar(&s.Starts, "starts", 10, "process starts timed")
	fs.IntVar(&s.FPMessages, "fp-messages", 3000, "messages sent to the executable while its memory is sampled")
	fs.IntVar(&s.MicroCount, "count", 5, "go test -count for the in-process benchmarks")
	fs.StringVar(&s.Benchtime, "benchtime", "1s", "go test -benchtime for the in-process benchmarks")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var err error
	if s.Latencies, err = bench.ParseLatencies(*latencies); err != nil {
		return err
	}
	if s.BatchParallelism < 1 {
		return fmt.Errorf("-batch-parallelism %d: want at least 1", s.BatchParallelism)
	}
	sections := map[string]bool{}
	for _, name := range strings.Split(*only, ",") {
		sections[strings.TrimSpace(name)] = true
	}
	endpoint, key := getenv("COSMOS_ENDPOINT"), getenv("COSMOS_KEY")
	if endpoint == "" {
		return errors.New("COSMOS_ENDPOINT is not set (make bench starts an emulator and sets it)")
	}
	s.Target = *target
	if s.Target == "" {
		s.Target = "the endpoint in COSMOS_ENDPOINT"
	}
	logf := func(format string, a ...any) { fmt.Fprintf(stderr, "benchreport: "+format+"\n", a...) }

	rep := &bench.Report{Settings: s, Machine: bench.DescribeMachine(), Started: time.Now()}
	t := bench.Target{Endpoint: endpoint, Key: key, Database: "bench-" + strings.ToLower(bench.RunID()), Container: "orders"}
	prepCtx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if err := t.Prepare(prepCtx); err != nil {
		return err
	}
	defer func() {
		dropCtx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := t.Drop(dropCtx); err != nil {
			logf("drop database %s: %v", t.Database, err)
		}
	}()

	if sections["micro"] {
		logf("in-process benchmarks (go test -bench, -count %d)", s.MicroCount)
		root, err := os.Getwd()
		if err != nil {
			return err
		}
		res, raw, err := bench.RunMicro(ctx, root, []string{"./orders", "./handler", "./httpapi", "./idempotency"},
			"^Benchmark(DecodeEnvelope|ParseOrder|Fingerprint|AcceptanceDocuments|ProcessOrderInProcess|ProcessOrderBatchInProcess|SubmitOrderInProcess|Execute)$",
			s.MicroCount, s.Benchtime)
		if err != nil {
			return err
		}
		rep.Micro = res
		if *rawPath != "" {
			if err := os.WriteFile(*rawPath, []byte(raw), 0o644); err != nil {
				return err
			}
		}
	}
	if sections["roundtrips"] {
		logf("round trips per message (%d per row, batch of %d)", s.RTMessages, s.RTBatch)
		rt, err := bench.RoundTrips(t, s.RTMessages, s.RTBatch)
		if err != nil {
			return err
		}
		rep.RoundTrips = rt
	}
	if sections["throughput"] {
		if *cpuProf != "" {
			f, err := os.Create(*cpuProf)
			if err != nil {
				return err
			}
			if err := pprof.StartCPUProfile(f); err != nil {
				return err
			}
		}
		var err error
		rep.Throughput, err = rounds(ctx, t, s.Latencies, s.Rounds, s.Messages,
			func(t bench.Target) ([]*bench.Variant, func(), error) { return bench.Variants(t, s) }, *emuPID, logf)
		if *cpuProf != "" {
			pprof.StopCPUProfile()
		}
		if err != nil {
			return err
		}
	}
	if sections["httpapi"] {
		logf("HTTP API: %d rounds of %d requests per path, one at a time", s.APIRounds, s.APIRequests)
		fd, err := rounds(ctx, t, s.Latencies, s.APIRounds, s.APIRequests, bench.HTTPAPIVariants, *emuPID, logf)
		if err != nil {
			return err
		}
		rep.HTTPAPI = fd
	}
	if sections["footprint"] {
		logf("footprint of %s (%d starts, %d messages under load)", *bin, s.Starts, s.FPMessages)
		fp, err := bench.Footprint(ctx, *bin, t, s.Starts, s.FPMessages, s.Concurrency, *emuPID)
		if err != nil {
			return err
		}
		rep.Footprint = fp
	}
	rep.Finished = time.Now()
	rep.Machine.LoadEnd = bench.LoadAverage()
	if old, err := os.ReadFile(*out); err == nil {
		rep.Kept = bench.KeptSections(string(old))
	}

	if err := os.MkdirAll(filepath.Dir(*out), 0o755); err != nil {
		return err
	}
	f, err := os.Create(*out)
	if err != nil {
		return err
	}
	rep.Markdown(f)
	if err := f.Close(); err != nil {
		return err
	}
	logf("wrote %s", *out)
	return nil
}

// rounds runs the rounds of the variants build makes: in each, every
// latency, and at each latency every variant once, starting with a
// different variant each round so that a slow spell of the shared machine
// does not always fall on the same one.
func rounds(ctx context.Context, t bench.Target, latencies []time.Duration, n, messages int, build func(bench.Target) ([]*bench.Variant, func(), error),
	emulatorPID int, logf func(string, ...any)) ([]bench.LatencyRun, error) {
	sets := make([][]*bench.Variant, len(latencies))
	runs := make([]bench.LatencyRun, len(latencies))
	for i, lat := range latencies {
		lt, stop, err := bench.AtLatency(t, lat)
		if err != nil {
			return nil, err
		}
		defer stop()
		vs, closeVariants, err := build(lt)
		if err != nil {
			return nil, err
		}
		defer closeVariants()
		for _, v := range vs {
			v.EmulatorPID = emulatorPID
		}
		sets[i] = vs
		runs[i].Latency = lat
	}
	run := bench.RunID()
	for r := range n {
		for li, variants := range sets {
			round := make([]bench.Phase, len(variants))
			for k := range variants {
				v := (r + k) % len(variants)
				ph, err := variants[v].RunPhase(ctx, fmt.Sprintf("TP-%s-%d-%d-%d", run, li, r, v), messages)
				if err != nil {
					return nil, err
				}
				round[v] = ph
				logf("round %d/%d, %4s: %-110s %6.0f msg/s  p50 %6.1f ms  CPU/msg %4d µs + emulator %4d µs  errors %d", r+1, n,
					latencies[li], ph.Variant, ph.Rate(), float64(ph.Percentile(0.5).Microseconds())/1000,
					ph.CPUPerMessage(ph.SelfCPU).Microseconds(), ph.CPUPerMessage(ph.EmulatorCPU).Microseconds(), ph.Errors)
			}
			runs[li].Rounds = append(runs[li].Rounds, round)
		}
	}
	return runs, nil
}
