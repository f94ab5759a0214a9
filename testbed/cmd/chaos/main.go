// Command chaos runs the order consumer under faults and checks that its
// invariants held: the handler, started and killed by the local Functions
// host emulator, writes through a fault-injecting proxy to a local Cosmos DB
// emulator, which is also taken away for whole outage phases. See
// docs/evidence/chaos.md.
package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/ordersink/orders-consumer/cosmos/cosmostest"
	"github.com/ordersink/orders-consumer/testbed/chaos"
	"github.com/ordersink/orders-consumer/testbed/faults"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "chaos:", err)
		os.Exit(1)
	}
}

// errViolations makes the command fail when an invariant did not hold.
var errViolations = errors.New("invariant violations")

func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("chaos", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfg := chaos.DefaultConfig()
	fs.IntVar(&cfg.Messages, "messages", 10000, "least number of messages to deliver")
	fs.IntVar(&cfg.Kills, "kills", 5, "SIGKILLs of the handler, spread over the run")
	fs.Uint64Var(&cfg.Seed, "seed", 0, "seed of the stream and the fault rolls (0: random)")
	timeout := fs.Duration("timeout", 10*time.Minute, "bound of the whole run")
	rateFlag := fs.String("faults", formatRates(chaos.DefaultRates), "fault rates per document request, kind=rate,…")
	fs.DurationVar(&cfg.RetryAfter, "retry-after", faults.DefaultRetryAfter, "x-ms-retry-after-ms of an injected 429")
	slow := fs.String("slow", "200ms-4s", "range of the delay of a slow answer")
	fs.DurationVar(&cfg.OperationTimeout, "operation-timeout", cfg.OperationTimeout, "the handler's COSMOS_OPERATION_TIMEOUT")
	fs.StringVar(&cfg.AppRoot, "app", ".", "function app root (host.json); the handler is its defaultExecutablePath, built by make build")
	handlerLog := fs.String("handler-log", "", "file for the handler's own output (default: discarded)")
	fs.BoolVar(&cfg.Atomic, "atomic-batches", false, "the endpoint's transactional batches are atomic (not the local emulator): an order without its outbox event is then a violation")
	fs.BoolVar(&cfg.Keep, "keep", false, "keep the run's database")
	cfg.Clocks.RegisterFlags(fs)
	outageFlag := fs.String("outages", faults.FormatOutages(faults.DefaultOutages), "phases in which Cosmos fails every request, kind@settled-fraction:length,… (kinds unreachable, 403-forbidden), or none")
	fs.IntVar(&cfg.Instances, "instances", cfg.Instances, "instances of the app: the run starts with one, scales out to this many at 10% settled and back to one at 70% (the last one crashing)")
	fs.DurationVar(&cfg.Lag, "lag", cfg.Lag, "at most this long, a point read on another instance than the writer's is answered from before the write (Session consistency without the session token; 0: off)")
	fs.StringVar(&cfg.HandlerPath, "executable", "", "handler executable (default: host.json's defaultExecutablePath)")
	fs.StringVar(&cfg.HistoryFile, "history-html", "", "file for porcupine's visualisation of the orderIds whose history is not linearizable (HTML)")
	cfg.Submissions.RegisterFlags(fs)
	fs.IntVar(&cfg.KeyKills, "key-kills", cfg.KeyKills, "SIGKILLs of the handler while it completes an idempotency key, so the key is left started")
	fs.IntVar(&cfg.KeyLostAnswers, "key-lost-answers", cfg.KeyLostAnswers, "idempotency key completions whose answer is lost after Cosmos stored them")
	fs.DurationVar(&cfg.KeyLease, "key-lease", cfg.KeyLease, "the handler's IDEMPOTENCY_LEASE: a key left started is taken over after it")
	fs.DurationVar(&cfg.SubmitDeadline, "submit-deadline", cfg.SubmitDeadline, "the handler's SUBMIT_DEADLINE (with 5 s to finish the key, at most 90% of -key-lease)")
	fs.DurationVar(&cfg.RecoveryBound, "recovery-bound", cfg.RecoveryBound, "orders must be created again this soon after each outage")
	fs.IntVar(&cfg.PublisherKills, "publisher-kills", cfg.PublisherKills, "SIGKILLs of the handler during a PublishOrderEvents invocation")
	fs.IntVar(&cfg.PublisherSendFaults, "publisher-send-faults", cfg.PublisherSendFaults, "PublishOrderEvents invocations whose send to the topic is refused after the handler answered")
	fs.StringVar(&cfg.TopicFile, "topic-file", ".local/chaos/order-events.jsonl", "file for the messages PublishOrderEvents sends to the topic (JSONL); empty for none")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := setFaults(&cfg, *rateFlag, *slow, *outageFlag); err != nil {
		return err
	}
	cfg.Endpoint, cfg.Key = getenv("COSMOS_ENDPOINT"), cmp.Or(getenv("COSMOS_KEY"), cosmostest.EmulatorKey)
	if cfg.Endpoint == "" {
		return errors.New("COSMOS_ENDPOINT is not set: start the local emulator (make chaos does)")
	}
	if *handlerLog != "" {
		f, err := os.Create(*handlerLog)
		if err != nil {
			return err
		}
		defer f.Close()
		cfg.HandlerOutput = f
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	cfg.Log, cfg.Progress = stderr, 5*time.Second
	rep, err := chaos.Run(ctx, cfg)
	if rep != nil {
		rep.Rerun = chaos.RerunCommand("chaos", fs, rep.Seed)
		rep.Print(stdout)
	}
	if err != nil {
		return err
	}
	if n := rep.Findings.Violations(); n > 0 {
		return fmt.Errorf("%w: %d", errViolations, n)
	}
	return nil
}

// setFaults sets cfg's fault rates, the range of a slow answer's delay and
// the outages from their flags.
func setFaults(cfg *chaos.Config, rates, slow, outages string) error {
	var err error
	if cfg.Rates, err = parseRates(rates); err != nil {
		return err
	}
	if cfg.SlowMin, cfg.SlowMax, err = parseRange(slow); err != nil {
		return err
	}
	cfg.Outages, err = faults.ParseOutages(outages)
	return err
}

// parseRates reads "429-throttled=0.05,slow=0.02"; kinds not named are 0.
func parseRates(s string) (faults.Rates, error) {
	var r faults.Rates
	for _, part := range strings.Split(s, ",") {
		if strings.TrimSpace(part) == "" {
			continue
		}
		name, val, ok := strings.Cut(part, "=")
		v, err := strconv.ParseFloat(strings.TrimSpace(val), 64)
		if !ok || err != nil {
			return r, fmt.Errorf("-faults: %q is not kind=rate", part)
		}
		i := slices.IndexFunc(faults.Faults, func(f faults.Fault) bool { return f.String() == strings.TrimSpace(name) })
		if i < 0 {
			return r, fmt.Errorf("-faults: unknown fault %q (kinds: %s)", name, formatRates(faults.Rates{}))
		}
		r[faults.Faults[i]] = v
	}
	return r, r.Validate()
}

func formatRates(r faults.Rates) string {
	parts := make([]string, len(faults.Faults))
	for i, f := range faults.Faults {
		parts[i] = fmt.Sprintf("%s=%g", f, r[f])
	}
	return strings.Join(parts, ",")
}

// parseRange reads "200ms-4s".
func parseRange(s string) (time.Duration, time.Duration, error) {
	a, b, ok := strings.Cut(s, "-")
	lo, err1 := time.ParseDuration(a)
	hi, err2 := time.ParseDuration(b)
	if !ok || err1 != nil || err2 != nil || hi < lo {
		return 0, 0, fmt.Errorf("-slow %q: want a range such as 200ms-4s", s)
	}
	return lo, hi, nil
}
