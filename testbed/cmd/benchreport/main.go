// Command benchreport measures the consumer and writes docs/evidence/benchmarks.md:
// Cosmos round trips per message, throughput through the handler against a
// plain azcosmos loop, batch against single invocations, what executeOnce
// adds to a request of the HTTP API, CPU and allocations in process,
// and the footprint of bin/handler. `make bench` runs it with an
// emulator; COSMOS_ENDPOINT and COSMOS_KEY name the endpoint.
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"time"

	"github.com/ordersink/orders-consumer/handler"
	"github.com/ordersink/orders-consumer/testbed/bench"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "benchreport:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	cfg, err := parseFlags(args)
	if err != nil {
		return err
	}
	endpoint := os.Getenv("COSMOS_ENDPOINT")
	if endpoint == "" {
		return errors.New("COSMOS_ENDPOINT is not set (make bench starts an emulator and sets it)")
	}
	rep := &bench.Report{Settings: cfg.s, Machine: bench.DescribeMachine(), Started: time.Now()}
	t := bench.Target{Endpoint: endpoint, Key: os.Getenv("COSMOS_KEY"), Database: "bench-" + strings.ToLower(bench.RunID()), Container: "orders"}
	prepCtx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	drop, err := t.Create(prepCtx)
	if err != nil {
		return err
	}
	defer func() {
		if err := drop(); err != nil {
			logf("drop database %s: %v", t.Database, err)
		}
	}()
	if err := cfg.runSections(ctx, t, rep); err != nil {
		return err
	}
	rep.Finished = time.Now()
	rep.Machine.LoadEnd = bench.LoadAverage()
	if err := writeReport(rep, cfg.out); err != nil {
		return err
	}
	logf("wrote %s", cfg.out)
	return nil
}

func logf(format string, a ...any) { fmt.Fprintf(os.Stderr, "benchreport: "+format+"\n", a...) }

// config is what the command line asks for.
type config struct {
	s        bench.Settings
	out, bin string
	emuPID   int
	sections map[string]bool
}

// parseFlags reads the command line into a config.
func parseFlags(args []string) (*config, error) {
	fs := flag.NewFlagSet("benchreport", flag.ContinueOnError)
	c := &config{sections: map[string]bool{}}
	s := &c.s
	fs.StringVar(&c.out, "out", "docs/evidence/benchmarks.md", "the Markdown file to write")
	fs.StringVar(&c.bin, "bin", "bin/handler", "the handler executable (make build)")
	fs.StringVar(&s.Target, "target", "the endpoint in COSMOS_ENDPOINT", "what the Cosmos endpoint is, for the report")
	only := fs.String("only", "micro,roundtrips,throughput,httpapi,footprint", "sections to run")
	fs.IntVar(&c.emuPID, "emulator-pid", 0, "the Cosmos emulator's process id, to measure its CPU time per message")
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
		return nil, err
	}
	var err error
	if s.Latencies, err = bench.ParseLatencies(*latencies); err != nil {
		return nil, err
	}
	if s.BatchParallelism < 1 {
		return nil, fmt.Errorf("-batch-parallelism %d: want at least 1", s.BatchParallelism)
	}
	for _, name := range strings.Split(*only, ",") {
		c.sections[strings.TrimSpace(name)] = true
	}
	return c, nil
}

// runSections runs the sections asked for, in order, filling rep.
func (c *config) runSections(ctx context.Context, t bench.Target, rep *bench.Report) error {
	s := c.s
	sections := []struct {
		name, what string
		run        func() error
	}{
		{"micro", fmt.Sprintf("in-process benchmarks (go test -bench, -count %d)", s.MicroCount), func() (err error) {
			rep.Micro, err = bench.RunMicro(ctx, []string{"./orders", "./handler", "./httpapi", "./idempotency"},
				"^Benchmark(DecodeEnvelope|ParseOrder|Fingerprint|AcceptanceDocuments|ProcessOrderInProcess|ProcessOrderBatchInProcess|SubmitOrderInProcess|Execute)$",
				s.MicroCount, s.Benchtime)
			return err
		}},
		{"roundtrips", fmt.Sprintf("round trips per message (%d per row, batch of %d)", s.RTMessages, s.RTBatch), func() (err error) {
			rep.RoundTrips, err = bench.RoundTrips(t, s.RTMessages, s.RTBatch)
			return err
		}},
		{"throughput", fmt.Sprintf("throughput: %d rounds of %d messages per variant", s.Rounds, s.Messages), func() (err error) {
			variants := func(t bench.Target) ([]*bench.Variant, func(), error) { return bench.Variants(t, s) }
			rep.Throughput, err = rounds(ctx, t, s.Latencies, s.Rounds, s.Messages, variants, c.emuPID)
			return err
		}},
		{"httpapi", fmt.Sprintf("HTTP API: %d rounds of %d requests per path, one at a time", s.APIRounds, s.APIRequests), func() (err error) {
			rep.HTTPAPI, err = rounds(ctx, t, s.Latencies, s.APIRounds, s.APIRequests, bench.HTTPAPIVariants, c.emuPID)
			return err
		}},
		{"footprint", fmt.Sprintf("footprint of %s (%d starts, %d messages under load)", c.bin, s.Starts, s.FPMessages), func() (err error) {
			rep.Footprint, err = bench.Footprint(ctx, c.bin, t, s.Starts, s.FPMessages, s.Concurrency, c.emuPID)
			return err
		}},
	}
	for _, sec := range sections {
		if c.sections[sec.name] {
			logf("%s", sec.what)
			if err := sec.run(); err != nil {
				return err
			}
		}
	}
	return nil
}

// writeReport writes rep as Markdown to out, keeping the sections of the
// old file the run did not measure.
func writeReport(rep *bench.Report, out string) error {
	if old, err := os.ReadFile(out); err == nil {
		rep.Kept = bench.KeptSections(string(old))
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	var doc bytes.Buffer
	rep.Markdown(&doc)
	return os.WriteFile(out, doc.Bytes(), 0o644)
}

// rounds runs the rounds of the variants build makes: in each, every
// latency, and at each latency every variant once, starting with a
// different variant each round so that a slow spell of the shared machine
// does not always fall on the same one.
func rounds(ctx context.Context, t bench.Target, latencies []time.Duration, n, messages int, build func(bench.Target) ([]*bench.Variant, func(), error),
	emulatorPID int) ([]bench.LatencyRun, error) {
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
