package localrun

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/ordersink/orders-consumer/testbed/chaos"
	"github.com/ordersink/orders-consumer/testbed/hostemu"
	"github.com/ordersink/orders-consumer/testbed/orderstream"
	"github.com/ordersink/orders-consumer/testbed/rig"
	"github.com/ordersink/orders-consumer/testbed/verify"
)

// Report is the outcome of a run: counts, and the problems the check found.
type Report struct {
	Functions   []string
	Batch       bool
	Queue       hostemu.QueueCounts
	Concurrency int
	BatchSize   int
	MaxDelivery int
	Database    string
	Seed        uint64
	Injected    *orderstream.Injected
	// SubmitInjected is what the HTTP submissions hold (nil without).
	SubmitInjected *orderstream.SubmitInjected
	ParkingQueue   string
	NotRun         []string // functions left out, and why

	Messages            int
	Invocations         int
	FailedInvocations   int
	ProtocolErrors      int
	CreatedOrders       int
	DuplicatesAbsorbed  int
	MismatchesParked    int
	MismatchDeliveries  int
	InvalidParked       int
	InvalidDeliveries   int
	ExhaustedParked     int
	OtherTypeDeliveries int
	Redeliveries        int
	LostCompletions     int
	DeadLetters         int
	DistinctValidOrders int
	StoredOrders        int
	Worker              hostemu.WorkerStats
	Clocks              hostemu.Clocks
	Recoveries          []verify.Recovery // one per Cosmos outage
	// Incidents are the checks shared with make chaos (testbed/verify).
	Incidents []*verify.Check
	Elapsed   time.Duration
	Files     []string
	// Submits are the figures of the HTTP submissions (nil without).
	Submits *chaos.SubmitCounts
	// Publisher is what the outbox publisher did (nil when it did not run).
	Publisher *rig.PublisherResult
	// Findings are the verdicts of the invariant checks make chaos runs
	// too (chaos.Judge).
	Findings                *verify.Findings
	storedContentDeliveries int
}

func newReport(app *hostemu.App, fns []*hostemu.Function, opts Options, db *ordersDB) *Report {
	r := &Report{Batch: fns[0].Trigger().Many(), Database: db.name, Seed: opts.Seed, Injected: opts.Injected, SubmitInjected: opts.SubmitInjected,
		ParkingQueue: opts.ParkingQueue, Messages: len(opts.Messages),
		Concurrency: firstPositive(opts.MaxConcurrentCalls, app.Host.MaxConcurrentCalls),
		BatchSize:   firstPositive(opts.MaxMessageBatchSize, app.Host.MaxMessageBatchSize),
		MaxDelivery: firstPositive(opts.MaxDeliveryCount, hostemu.DefaultMaxDeliveryCount)}
	for _, fn := range fns {
		shape := fmt.Sprintf("one message per invocation, up to %d in flight", r.Concurrency)
		if fn.Trigger().Many() {
			shape = fmt.Sprintf("batches of up to %d messages", r.BatchSize)
		}
		r.Functions = append(r.Functions, fmt.Sprintf("%s (%s)", fn.Name, shape))
	}
	return r
}

// OK reports whether every invariant holds.
func (r *Report) OK() bool { return r.Findings != nil && r.Findings.Violations() == 0 }

// Print writes the summary table.
func (r *Report) Print(w io.Writer) {
	fmt.Fprintf(w, "%s; maxDeliveryCount %d; database %s\n", strings.Join(r.Functions, " + "), r.MaxDelivery, r.Database)
	fmt.Fprintf(w, "clocks: %s\n", r.Clocks)
	if len(r.NotRun) > 0 {
		fmt.Fprintf(w, "not run: %s\n", strings.Join(r.NotRun, ", "))
	}
	if in := r.SubmitInjected; in != nil {
		fmt.Fprintf(w, "HTTP (POST /api/orders): %d orders under %d keys: %d first attempts timed out, %d keys sent as %d identical requests at once, %d keys reused with another payload, %d orders again under a new key, %d raced by another client with other content\n",
			in.Orders, in.Keys, in.Timeouts, in.Concurrent, in.ConcurrentCopies, in.Reused, in.NewKeys, in.Races)
	}
	if in := r.Injected; in != nil {
		fmt.Fprintf(w, "stream (seed %d): %d orders + %d duplicates + %d burst copies (%d bursts) + %d mismatches + %d invalid; %d lost completions\n",
			r.Seed, in.Orders, in.Duplicates, in.BurstCopies, in.Bursts, in.Mismatches, in.Invalid, in.LostCompletions)
	}
	fmt.Fprintln(w)
	row := func(name string, n any, note string) { fmt.Fprintf(w, "  %-20s %8v   %s\n", name, n, note) }
	row("messages", r.Messages, "sent to the queue")
	if r.Submits != nil {
		row("HTTP submissions", r.Submits.Keys, r.Submits.String())
	}
	if r.Queue.Dropped > 0 {
		row("dropped", r.Queue.Dropped, "by the queue's duplicate detection (same MessageId inside the window): never delivered")
	}
	row("invocations", r.Invocations, fmt.Sprintf("%d failed (%d broke the wire contract)", r.FailedInvocations, r.ProtocolErrors))
	row("created", r.CreatedOrders, "orders in Cosmos DB")
	row("duplicates", r.DuplicatesAbsorbed, "deliveries of a stored content, absorbed")
	row("mismatches parked", r.MismatchesParked, fmt.Sprintf("HashMismatch, for %d deliveries of another content", r.MismatchDeliveries))
	row("invalid parked", r.InvalidParked, fmt.Sprintf("ValidationFailed/MalformedMessage, for %d deliveries", r.InvalidDeliveries))
	if r.OtherTypeDeliveries > 0 {
		row("other message types", r.OtherTypeDeliveries, "deliveries with another valid Subject (e.g. OrderStatusChanged), not checked here")
	}
	if r.ExhaustedParked > 0 {
		row("exhausted parked", r.ExhaustedParked, "RetryBudgetExhausted")
	}
	row("retries", r.Redeliveries, fmt.Sprintf("redeliveries: %d after lost completions, %d after expired locks, %d after failures",
		r.LostCompletions, r.Queue.ExpiredLocks, r.Redeliveries-r.LostCompletions-r.Queue.ExpiredLocks))
	row("broker dead-letters", r.DeadLetters, "MaxDeliveryCountExceeded")
	row("handler starts", r.Worker.Starts, fmt.Sprintf("%d killed on purpose, %d restarts after functionTimeout, %d unexpected exits",
		r.Worker.Kills, r.Worker.TimeoutRestarts, r.Worker.UnexpectedExits))
	if r.Publisher != nil {
		row("published", len(r.Publisher.Topic), r.Publisher.String())
	}
	for i, rc := range r.Recoveries {
		row(fmt.Sprintf("outage %d", i+1), fmt.Sprintf("%.0f s", rc.End.Sub(rc.Start).Seconds()), rc.String())
	}
	secs := r.Elapsed.Seconds()
	row("elapsed", fmt.Sprintf("%.1f s", secs), fmt.Sprintf("%.0f messages/s", float64(r.Messages)/max(secs, 1e-9)))
	fmt.Fprintln(w)

	r.printChecks(w)
	if r.OK() {
		fmt.Fprintln(w, "\nINVARIANT HOLDS")
	} else {
		fmt.Fprintln(w, "\nINVARIANT VIOLATED")
	}
	if len(r.Files) > 0 {
		fmt.Fprintf(w, "files: %s\n", strings.Join(r.Files, ", "))
	}
}

// printChecks writes the verdict of every check, with the first violations
// of those that failed.
func (r *Report) printChecks(w io.Writer) {
	if r.Findings == nil {
		fmt.Fprintln(w, "  checks not run")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, c := range r.Findings.Checks {
		verdict := "ok"
		if len(c.Violations) > 0 {
			verdict = fmt.Sprintf("FAILED (%d)", len(c.Violations))
		}
		fmt.Fprintf(tw, "  check\t%s\t%d checked\t%s\n", c.Name, c.Checked, verdict)
	}
	_ = tw.Flush()
	for _, c := range r.Findings.Checks {
		for i, v := range c.Violations {
			if i == maxExamples {
				fmt.Fprintf(w, "    … and %d more\n", len(c.Violations)-i)
				break
			}
			fmt.Fprintf(w, "    - %s\n", v)
		}
	}
	if n := len(r.Findings.OrdersWithoutEvent); n > 0 {
		fmt.Fprintf(w, "  %d orders without their OrderAccepted outbox event (reported, not counted: the local emulator does not roll a transactional batch back)\n", n)
	}
}

// maxExamples bounds the violations listed per check.
const maxExamples = 10
