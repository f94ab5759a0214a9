// Command localrun is the make run driver: with the local Functions host
// emulator (testbed/hostemu) it starts the custom handler the way the Azure
// Functions host does, feeds it a Service Bus queue with at-least-once
// delivery (duplicates, bursts, lost completions, mismatches, invalid
// messages, handler kills, a Cosmos outage), keeps the platform's clocks
// (locks, functionTimeout), applies its output bindings, and checks that
// Cosmos DB ends with exactly one order per valid orderId, every other
// content parked and no good order given up on. It exits 1 when a check
// fails.
//
//	localrun [flags]                      a generated stream (2000 orders)
//	localrun -stream messages.jsonl       a stream file (see testbed/orderstream.Record)
//	localrun -keep-database …             then ordersctl parked resubmit, then
//	localrun -stream .local/hostemu/send.jsonl -database NAME -resume
//	localrun -serve                       no stream: serve the HTTP triggers until Ctrl-C
//	localrun -serve -hold-key-completions 10s   the same, a key's second request meets the first in flight
//
// While it runs, the app's httpTrigger functions answer on -http-addr
// (127.0.0.1:7071, Core Tools' port) under /api, as the host serves them.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"golang.org/x/term"

	"github.com/ordersink/orders-consumer/testbed/chaos"
	"github.com/ordersink/orders-consumer/testbed/faults"
	"github.com/ordersink/orders-consumer/testbed/localrun"
	"github.com/ordersink/orders-consumer/testbed/orderstream"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	progress := io.Writer(nil)
	if term.IsTerminal(int(os.Stdout.Fd())) {
		progress = os.Stdout
	}
	os.Exit(run(ctx, os.Args[1:], os.Environ(), os.Stdout, os.Stderr, progress))
}

// exit codes
const (
	exitOK        = 0
	exitViolation = 1 // the run completed and the invariant does not hold
	exitError     = 2 // bad flags, or the run could not be completed
)

type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error {
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			*l = append(*l, s)
		}
	}
	return nil
}

// functionKeysFlag reads -function-key NAME=VALUE (or VALUE, named
// "default") into a map of the app's function keys.
type functionKeysFlag struct{ keys *map[string]string }

func (f functionKeysFlag) String() string {
	if f.keys == nil {
		return ""
	}
	return strings.Join(slices.Sorted(maps.Keys(*f.keys)), ",")
}

func (f functionKeysFlag) Set(v string) error {
	name, value, ok := strings.Cut(v, "=")
	if !ok {
		name, value = "default", v
	}
	if name == "" || value == "" {
		return fmt.Errorf("want NAME=VALUE or VALUE, got %q", v)
	}
	if *f.keys == nil {
		*f.keys = map[string]string{}
	}
	(*f.keys)[name] = value
	return nil
}

type settingFlag []string

func (l *settingFlag) String() string     { return strings.Join(*l, " ") }
func (l *settingFlag) Set(v string) error { *l = append(*l, v); return nil }

func run(ctx context.Context, args, environ []string, stdout, stderr, progress io.Writer) int {
	fs, c := newFlags(stderr)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitError
	}
	opts := c.opts // the flags are all set once parsed
	var err error
	if opts.Outages, err = faults.ParseOutages(c.outages); err != nil {
		return fail(stderr, err)
	}
	if fs.NArg() > 0 {
		return fail(stderr, fmt.Errorf("unexpected argument %q", fs.Arg(0)))
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	if c.httpAddr != "off" {
		opts.HTTPAddr = c.httpAddr
		// make run goes on without the listener when the default port is
		// taken; an address asked for must open.
		opts.HTTPOptional = !given["http-addr"] && !c.serve
	}

	opts.Environ = environ
	opts.Log = stderr
	if !c.noBar {
		opts.Progress = progress
	}
	if c.local != "" {
		opts.LocalSettings = c.local
		if !filepath.IsAbs(c.local) {
			opts.LocalSettings = filepath.Join(opts.AppRoot, c.local)
		}
	}
	if !filepath.IsAbs(opts.OutDir) {
		opts.OutDir = filepath.Join(opts.AppRoot, opts.OutDir)
	}
	if given["hold-key-completions"] && !c.serve {
		return fail(stderr, errors.New("-hold-key-completions is for -serve"))
	}
	if c.serve {
		return serveApp(ctx, opts, given, stdout, stderr)
	}
	if err := loadStream(&opts, c.stream, c.gen, c.writeStream); err != nil {
		return fail(stderr, err)
	}
	if err := addSubmissions(&opts, c.sub, c.gen.Seed, given); err != nil {
		return fail(stderr, err)
	}
	rep, err := localrun.Run(ctx, opts)
	if err != nil {
		return fail(stderr, err)
	}
	rep.Rerun = chaos.RerunCommand("run", fs, c.gen.Seed)
	rep.Print(stdout)
	if !rep.OK() {
		return exitViolation
	}
	return exitOK
}

// fail reports err and returns exitError.
func fail(stderr io.Writer, err error) int {
	fmt.Fprintln(stderr, "localrun:", err)
	return exitError
}

// cli is what localrun's command line sets.
type cli struct {
	opts                                          localrun.Options
	gen                                           orderstream.Options
	sub                                           orderstream.SubmitOptions
	stream, local, writeStream, outages, httpAddr string
	noBar, serve                                  bool
}

// newFlags declares localrun's flags.
func newFlags(stderr io.Writer) (*flag.FlagSet, *cli) {
	fs := flag.NewFlagSet("localrun", flag.ContinueOnError)
	fs.SetOutput(stderr)
	c := &cli{gen: orderstream.DefaultOptions(), sub: orderstream.DefaultSubmitOptions()}
	opts, gen := &c.opts, &c.gen
	fs.StringVar(&c.stream, "stream", "", "deliver the messages of this JSONL file instead of generated orders")
	fs.StringVar(&opts.AppRoot, "app", ".", "function app root (host.json, */function.json)")
	fs.StringVar(&c.local, "local-settings", "local.settings.json", "Values to use where the environment has none, like Core Tools (relative to -app; empty for none)")
	fs.BoolVar(&c.noBar, "no-progress", false, "no progress bar even on a terminal")
	fs.BoolVar(&c.serve, "serve", false, "no stream and no check: serve the HTTP triggers and the queue until Ctrl-C (make serve)")
	fs.StringVar(&c.httpAddr, "http-addr", defaultHTTPAddr, "where the HTTP triggers listen, or off")
	fs.Var(functionKeysFlag{&opts.FunctionKeys}, "function-key", "a function key NAME=VALUE (a bare VALUE is named default, as the host names the key it creates; repeatable): one of them is required (x-functions-key header or code query) from callers of authLevel function and admin functions, as Azure does, and the handler is told its name; none: no check, as Core Tools")
	fs.DurationVar(&opts.HoldKeyCompletions, "hold-key-completions", 0, "-serve: hold each completion of an idempotency key record until another request reads the record, at most this long (below SUBMIT_DEADLINE), so a second request with a key meets the first in flight; once one has been met so, completions pass (make http-demo)")
	fs.StringVar(&opts.HistoryFile, "history-html", "", "file for porcupine's visualisation of the orderIds whose history is not linearizable (HTML)")
	fs.StringVar(&opts.Executable, "executable", "", "handler executable (default: host.json customHandler.description.defaultExecutablePath)")
	fs.Var((*listFlag)(&opts.Functions), "function", "feed the queue to these functions only (comma-separated); the others are disabled")
	fs.Var((*settingFlag)(&opts.Settings), "setting", "app setting KEY=VALUE for the handler and the host, e.g. AzureWebJobs.ProcessOrder.Disabled=true (repeatable)")
	fs.IntVar(&gen.Orders, "orders", gen.Orders, "generated orders")
	fs.Uint64Var(&gen.Seed, "seed", gen.Seed, "seed of the generated stream")
	fs.Float64Var(&gen.Duplicates, "duplicates", gen.Duplicates, "producer re-sends, as a fraction of orders")
	fs.Float64Var(&gen.Bursts, "bursts", gen.Bursts, "orders sent as concurrent copies, as a fraction of orders")
	fs.IntVar(&gen.BurstSize, "burst-size", gen.BurstSize, "most copies in flight at once in a burst")
	fs.Float64Var(&gen.Mismatches, "mismatches", gen.Mismatches, "orders re-sent with other content (same orderId), as a fraction of orders")
	fs.Float64Var(&gen.Invalid, "invalid", gen.Invalid, "invalid messages, as a fraction of orders")
	fs.Float64Var(&gen.LostCompletions, "lost-completions", gen.LostCompletions, "messages whose completion the broker drops, as a fraction")
	c.sub.RegisterFlags(fs)
	fs.StringVar(&c.writeStream, "write-stream", "", "also write the generated stream to this JSONL file")
	fs.IntVar(&opts.MaxConcurrentCalls, "concurrency", 0, "invocations in flight (default: host.json maxConcurrentCalls, else 16)")
	fs.IntVar(&opts.MaxMessageBatchSize, "batch-size", 0, "messages per batch (default: host.json maxMessageBatchSize, else 1000)")
	fs.IntVar(&opts.BatchesInFlight, "batches-in-flight", 1, "batches in flight at once (more than 1 is several host instances)")
	fs.IntVar(&opts.MaxDeliveryCount, "max-delivery-count", 0, "the queue's maxDeliveryCount (default: the orders queue's, one past the retry budget)")
	fs.DurationVar(&opts.DuplicateDetection, "duplicate-detection", 0, "the queue's duplicate detection window, e.g. 10m as in Azure (0: off, every resend reaches the consumer)")
	fs.IntVar(&opts.HandlerKills, "kill-handler", 0, "SIGKILL the handler this many times, spread over the run")
	fs.DurationVar(&opts.Lag, "lag", 0, "with -instances above 1: at most this long, a point read on another instance than the writer's is answered from before the write (Session consistency without the session token)")
	fs.IntVar(&opts.Instances, "instances", 1, "instances of the app, each its own handler, host and change feed lease owner; HTTP requests spread over them")
	opts.Clocks.RegisterFlags(fs)
	fs.StringVar(&c.outages, "outages", faults.FormatOutages(defaultOutages), "phases in which Cosmos fails every request, kind@settled-fraction:length,… (kinds unreachable, 403-forbidden), or none; needs a loopback http:// Cosmos endpoint")
	fs.StringVar(&opts.Database, "database", "", "Cosmos database to use; it must hold no orders (default: a fresh one, deleted afterwards)")
	fs.BoolVar(&opts.KeepDatabase, "keep-database", false, "keep the fresh database for a look afterwards (ordersctl order show)")
	fs.BoolVar(&opts.Resume, "resume", false, "continue the run that kept -database: deliver -stream (e.g. what ordersctl parked resubmit wrote) into it, append to the files in -out")
	fs.StringVar(&opts.OutDir, "out", ".local/hostemu", "folder for the parked messages, dead letters and handler output")
	fs.DurationVar(&opts.Timeout, "timeout", 5*time.Minute, "give up after this long")
	fs.BoolVar(&opts.Verbose, "v", false, "print the handler's Logs and every failed invocation")
	return fs, c
}

// defaultHTTPAddr is Core Tools' address.
const defaultHTTPAddr = "127.0.0.1:7071"

// defaultOutages is the outage of make run's default stream: Cosmos
// unreachable for 30 s once a quarter of the messages are settled.
var defaultOutages = []faults.Outage{{Kind: faults.Unreachable, After: 0.25, For: 30 * time.Second}}

// serveApp is -serve: the listener and the queue until ctx ends.
func serveApp(ctx context.Context, opts localrun.Options, given map[string]bool, stdout, stderr io.Writer) int {
	stream := []string{"stream", "write-stream", "orders", "seed", "duplicates", "bursts", "burst-size", "mismatches", "invalid", "lost-completions", "kill-handler", "outages"}
	// and every -http-… flag, as SubmitOptions registers them
	subFlags := flag.NewFlagSet("", flag.ContinueOnError)
	new(orderstream.SubmitOptions).RegisterFlags(subFlags)
	subFlags.VisitAll(func(f *flag.Flag) { stream = append(stream, f.Name) })
	for _, f := range stream {
		if given[f] {
			return fail(stderr, fmt.Errorf("-%s is about the generated stream; -serve has none", f))
		}
	}
	if opts.HTTPAddr == "" {
		return fail(stderr, errors.New("-serve needs the HTTP listener; -http-addr off leaves nothing to serve"))
	}
	opts.Outages = nil // they follow a stream's progress
	if err := localrun.Serve(ctx, opts, stdout); err != nil {
		return fail(stderr, err)
	}
	return exitOK
}

// addSubmissions generates the HTTP submissions, when the listener is on.
func addSubmissions(opts *localrun.Options, sub orderstream.SubmitOptions, seed uint64, given map[string]bool) error {
	if opts.HTTPAddr == "" {
		if given["http-orders"] && sub.Orders > 0 {
			return errors.New("-http-orders needs the HTTP listener; -http-addr is off")
		}
		return nil
	}
	sub.Seed = seed
	subs, in, err := orderstream.GenerateSubmissions(sub)
	if err != nil {
		return err
	}
	if len(subs) > 0 {
		opts.Submissions, opts.SubmitInjected = subs, &in
	}
	return nil
}

func loadStream(opts *localrun.Options, path string, gen orderstream.Options, writeTo string) error {
	if path != "" {
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		opts.Messages, err = orderstream.Read(f)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if len(opts.Messages) == 0 {
			return errors.New(path + ": no messages")
		}
		return nil
	}
	s, err := orderstream.Generate(gen)
	if err != nil {
		return err
	}
	opts.Messages, opts.Injected, opts.Seed = s.Messages, &s.Injected, gen.Seed
	if writeTo == "" {
		return nil
	}
	f, err := os.Create(writeTo)
	if err != nil {
		return err
	}
	if err := orderstream.Write(f, s.Messages); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
