package chaos

import (
	"cmp"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ordersink/orders-consumer/handler"
	"github.com/ordersink/orders-consumer/testbed/faults"
	"github.com/ordersink/orders-consumer/testbed/hostemu"
	"github.com/ordersink/orders-consumer/testbed/orderstream"
	"github.com/ordersink/orders-consumer/testbed/rig"
	"github.com/ordersink/orders-consumer/testbed/verify"
)

// Report is what a run did and what the checks found: make chaos (Run) and
// make run (testbed/localrun) fill it and print it the same way.
type Report struct {
	// What ran: the functions the queue fed, each with its trigger's shape
	// (Batch: batches), the app's functions left out and why, the clocks.
	Seed        uint64
	Database    string
	Functions   []string
	Batch       bool
	NotRun      []string
	MaxDelivery int
	Clocks      hostemu.Clocks
	Took        time.Duration

	// What was sent: the stream's faults (nil for a stream read from a
	// file), its messages and their distinct valid orderIds.
	Stream   *orderstream.Injected
	Messages int
	Orders   int

	Queue          hostemu.QueueCounts
	Worker         hostemu.WorkerStats
	KillsRequested int
	// Instances ran side by side (scaled from one and back when Scaled);
	// Kills are the kills of their handlers, each with how soon its
	// instance completed an invocation again.
	Instances int
	Scaled    bool
	Kills     []rig.InstanceKill
	// Summary is what became of each message (the tracker); Contents the
	// deliveries and parked messages by content, and the stored orders.
	verify.Summary
	Contents
	// Outcomes are the invocations by handler outcome (its log).
	Outcomes map[string]int

	// The fault proxy's figures (Proxy.Requests 0 without it): the rates
	// it injected at, what it did, and the creates Cosmos accepted whose
	// answer was lost or late.
	Rates         faults.Rates
	Proxy         faults.ProxyCounts
	UnseenCreates map[faults.Fault]int
	Outages       []faults.OutageRecord

	// HTTP is the HTTP traffic's figures (nil without); Publisher what the
	// outbox publisher did (nil when it did not run).
	HTTP      *HTTPFigures
	Publisher *rig.PublisherResult

	Findings *verify.Findings
	// Files are the files the run wrote (make run's local queues).
	Files []string
	// Rerun is the command that runs this run again (RerunCommand).
	Rerun string
}

// RerunCommand is the make command that reruns a run of target (run,
// chaos) made with fs's flags: those set on the command line, -seed always,
// without the files of the run's own logs. A run's faults are drawn from
// its seed and what happens, so the rerun meets the same faults.
func RerunCommand(target string, fs *flag.FlagSet, seed uint64) string {
	args := []string{"-seed " + strconv.FormatUint(seed, 10)}
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "seed", "handler-log", "history-html", "no-progress":
		default:
			args = append(args, "-"+f.Name+" "+f.Value.String())
		}
	})
	return fmt.Sprintf("make %s %s_ARGS='%s'", target, strings.ToUpper(target), strings.Join(args, " "))
}

// HTTPFigures are what a run's HTTP traffic did.
type HTTPFigures struct {
	Injected orderstream.SubmitInjected
	Answers  SubmitCounts
	// KeyFaults are the faults aimed at key completions that took place.
	KeyFaults keyFaultCounts
	// TookOver and Fenced are the requests that took a stale key over and
	// those another attempt's take-over fenced (the handler's log).
	TookOver, Fenced int
}

// Contents are the deliveries and parked messages of a run by what their
// content is, and the orders stored for the queue's orderIds. They check
// nothing: the checks (CheckRun) do, and the report prints both.
type Contents struct {
	Invocations, FailedInvocations, ProtocolErrors int
	StoredOrders                                   int
	// DuplicatesAbsorbed are the deliveries of a stored content beyond
	// the one that stored it; MismatchDeliveries those of another content
	// for a stored orderId, MismatchesParked the HashMismatch envelopes.
	DuplicatesAbsorbed                   int
	MismatchDeliveries, MismatchesParked int
	// InvalidParked are the ValidationFailed and MalformedMessage
	// envelopes, ExhaustedParked the RetryBudgetExhausted ones.
	InvalidDeliveries, InvalidParked int
	ExhaustedParked                  int
	OtherTypeDeliveries              int
	Redeliveries, LostCompletions    int
	DeadLetters                      int

	storedContentDeliveries int
}

// OK reports whether every invariant holds.
func (r *Report) OK() bool { return r.Findings != nil && r.Findings.Violations() == 0 }

// Parking reasons of docs/contract.md §6.
const (
	reasonHashMismatch = "HashMismatch"
	reasonValidation   = "ValidationFailed"
	reasonMalformed    = "MalformedMessage"
	reasonExhausted    = "RetryBudgetExhausted"
)

// StoredOrder is the part of an order document the figures read.
type StoredOrder struct {
	ID          string `json:"id"`
	OrderID     string `json:"orderId"`
	RequestHash string `json:"requestHash"`
}

// storedOrders reads the order documents docs.
func storedOrders(docs []json.RawMessage) ([]StoredOrder, error) {
	out := make([]StoredOrder, 0, len(docs))
	for _, d := range docs {
		var o StoredOrder
		if err := json.Unmarshal(d, &o); err != nil {
			return nil, fmt.Errorf("order document: %w", err)
		}
		out = append(out, o)
	}
	return out, nil
}

// Count works out the figures by content from the messages delivered, the
// invocations, the stored orders (of the queue's orderIds) and the number
// of broker dead-letters. Envelopes count when sent to parkingQueue.
func Count(msgs []*hostemu.Message, invs []*hostemu.Invocation, stored []StoredOrder, deadLetters int, parkingQueue string) Contents {
	var c Contents
	classes := make(map[*hostemu.Message]orderstream.Class, len(msgs))
	for _, m := range msgs {
		classes[m] = orderstream.Classify(m)
	}
	storedHash := map[string]string{}
	for _, o := range stored {
		storedHash[o.OrderID] = o.RequestHash
	}
	c.StoredOrders = len(storedHash)
	for _, inv := range invs {
		c.Invocations++
		for i, d := range inv.Deliveries {
			if d.DeliveryCount > 1 {
				c.Redeliveries++
			}
			if i < len(inv.Settlements) && inv.Settlements[i] == hostemu.CompletionLost {
				c.LostCompletions++
			}
		}
		if !inv.OK() {
			c.FailedInvocations++
			if inv.Protocol {
				c.ProtocolErrors++
			}
			continue
		}
		c.countInvocation(inv, classes, storedHash, parkingQueue)
	}
	c.DeadLetters = deadLetters
	c.DuplicatesAbsorbed = c.storedContentDeliveries - c.StoredOrders
	return c
}

// countInvocation books one successful invocation's deliveries by what their
// content is, and its parking envelopes by reason.
func (c *Contents) countInvocation(inv *hostemu.Invocation, classes map[*hostemu.Message]orderstream.Class, storedHash map[string]string, parkingQueue string) {
	for _, d := range inv.Deliveries {
		cl, ok := classes[d.Message]
		if given, isGiven := orderstream.Unwrap(d.Message); !ok && isGiven {
			cl = orderstream.Classify(given) // an order SubmitOrder or a batch put on the queue
		}
		switch {
		case cl.OtherType:
			c.OtherTypeDeliveries++
		case !cl.Valid:
			c.InvalidDeliveries++
		case storedHash[cl.OrderID] == cl.Content:
			c.storedContentDeliveries++
		case storedHash[cl.OrderID] != "":
			c.MismatchDeliveries++
		}
	}
	for _, o := range inv.Outputs {
		if o.Entity != parkingQueue || o.ContentType == "" {
			continue
		}
		env, err := orderstream.ParseEnvelope(o.Text)
		if err != nil {
			continue // the checks name it: a parked message must be an envelope
		}
		switch env.Reason {
		case reasonHashMismatch:
			c.MismatchesParked++
		case reasonValidation, reasonMalformed:
			c.InvalidParked++
		case reasonExhausted:
			c.ExhaustedParked++
		}
	}
}

// SetFunctions names the functions the queue feeds, each with its
// trigger's shape.
func (r *Report) SetFunctions(fns []*hostemu.Function, concurrency, batchSize int) {
	for _, fn := range fns {
		shape := fmt.Sprintf("one message per invocation, up to %d in flight", concurrency)
		if fn.Trigger().Many() {
			r.Batch = true
			shape = fmt.Sprintf("batches of up to %d messages", batchSize)
		}
		r.Functions = append(r.Functions, fmt.Sprintf("%s (%s)", fn.Name, shape))
	}
}

// ParkingQueue is the queue fn's parking output binding sends to, "" without
// one.
func ParkingQueue(fn *hostemu.Function) string {
	if b := fn.Binding(handler.ParkingBinding); b != nil {
		return b.Entity()
	}
	return ""
}

// maxExamples bounds the violations and accounted messages printed per check.
const maxExamples = 10

// Print writes the run's figures, the checks' results and the result of
// the run.
func (r *Report) Print(w io.Writer) {
	p := func(format string, args ...any) { fmt.Fprintf(w, format+"\n", args...) }
	row := func(name string, n any, note string) { p("  %-20s %8v   %s", name, n, note) }
	r.printHead(p)
	p("")
	r.printDeliveries(row)
	r.printProxy(row)
	row("kills", r.Worker.Kills, fmt.Sprintf("SIGKILLs (%d requested); %d handler starts, %d restarts after functionTimeout, %d unexpected exits",
		r.KillsRequested, r.Worker.Starts, r.Worker.TimeoutRestarts, r.Worker.UnexpectedExits))
	r.printInstances(row)
	r.printHTTP(row)
	if r.Publisher != nil {
		row("published", len(r.Publisher.Topic), r.Publisher.String())
	}
	if f := r.Findings; f != nil {
		row("Cosmos", "", "documents by type: "+counts(f.Documents))
		for i, rc := range f.Recoveries {
			row(fmt.Sprintf("outage %d", i+1), fmt.Sprintf("%.0f s", rc.End.Sub(rc.Start).Seconds()), rc.String())
		}
	}
	row("elapsed", fmt.Sprintf("%.1f s", r.Took.Seconds()), "")
	p("")
	r.printChecks(p)
	if r.OK() {
		p("\nINVARIANT HOLDS")
	} else {
		p("\nINVARIANT VIOLATED")
	}
	if r.Rerun != "" {
		p("rerun: %s", r.Rerun)
	}
	if len(r.Files) > 0 {
		p("files: %s", strings.Join(r.Files, ", "))
	}
}

// printHead writes what the run was: functions, seed, clocks, fault rates
// and what the stream and the HTTP clients injected.
func (r *Report) printHead(p func(string, ...any)) {
	head := []string{fmt.Sprintf("seed %d", r.Seed), "database " + r.Database}
	if len(r.Functions) > 0 {
		head = append([]string{strings.Join(r.Functions, " + ")}, head...)
	}
	if r.MaxDelivery > 0 {
		head = append(head, fmt.Sprintf("maxDeliveryCount %d", r.MaxDelivery))
	}
	p("%s", strings.Join(head, "; "))
	p("clocks: %s", r.Clocks)
	if len(r.NotRun) > 0 {
		p("not run: %s", strings.Join(r.NotRun, ", "))
	}
	if r.Rates.Total() > 0 {
		p("fault rates per document request: %s", r.Rates)
	}
	if in := r.Stream; in != nil {
		p("stream: %d orders + %d duplicates + %d burst copies (%d bursts) + %d mismatches + %d invalid; %d lost completions",
			in.Orders, in.Duplicates, in.BurstCopies, in.Bursts, in.Mismatches, in.Invalid, in.LostCompletions)
	}
	if h := r.HTTP; h != nil {
		in := h.Injected
		p("HTTP (POST /api/orders): %d orders under %d keys: %d first attempts timed out, %d keys sent as %d identical requests at once, %d keys reused with another payload, %d orders again under a new key, %d raced by another client with other content, %d first put on the queue (the fall-back), %d at the event size edge",
			in.Orders, in.Keys, in.Timeouts, in.Concurrent, in.ConcurrentCopies, in.Reused, in.NewKeys, in.Races, in.Fallbacks, in.Edge)
	}
}

// printDeliveries writes the rows of what the queue delivered and how each
// delivery ended.
func (r *Report) printDeliveries(row func(string, any, string)) {
	secs := max(r.Took.Seconds(), 1e-9)
	row("messages", r.Messages, fmt.Sprintf("sent to the queue (%.0f/s), %d distinct valid orderIds", float64(r.Messages)/secs, r.Orders))
	if r.Queue.Dropped > 0 {
		row("dropped", r.Queue.Dropped, "by the queue's duplicate detection (same MessageId inside the window): never delivered")
	}
	row("invocations", r.Invocations, fmt.Sprintf("%d failed (%d broke the wire contract); by outcome (handler log): %s",
		r.FailedInvocations, r.ProtocolErrors, counts(r.Outcomes)))
	row("retries", r.Redeliveries, fmt.Sprintf("redeliveries: %d after lost completions, %d after expired locks, %d after failures [%s]",
		r.LostCompletions, r.Queue.ExpiredLocks, r.Redeliveries-r.LostCompletions-r.Queue.ExpiredLocks, counts(r.Failures)))
	row("created", r.StoredOrders, "orders in Cosmos DB for the queue's orderIds")
	row("duplicates", r.DuplicatesAbsorbed, "deliveries of a stored content, absorbed")
	row("mismatches parked", r.MismatchesParked, fmt.Sprintf("HashMismatch, for %d deliveries of another content", r.MismatchDeliveries))
	row("invalid parked", r.InvalidParked, fmt.Sprintf("ValidationFailed/MalformedMessage, for %d deliveries", r.InvalidDeliveries))
	if r.OtherTypeDeliveries > 0 {
		row("other message types", r.OtherTypeDeliveries, "deliveries with another valid Subject (e.g. OrderStatusChanged), not checked here")
	}
	if r.ExhaustedParked > 0 {
		row("exhausted parked", r.ExhaustedParked, "RetryBudgetExhausted")
	}
	row("broker dead-letters", r.DeadLetters, "MaxDeliveryCountExceeded")
	row("deliveries", r.Deliveries, fmt.Sprintf("final state per message: %s; %d parking envelopes written (repeats after lost completions included)",
		counts(r.Final), r.Envelopes))
}

// printProxy writes the fault proxy's rows: faults injected, creates whose
// answer was lost, resends.
func (r *Report) printProxy(row func(string, any, string)) {
	if pc := r.Proxy; pc.Requests > 0 {
		var injected, resent []string
		for _, f := range faults.Faults {
			injected = append(injected, fmt.Sprintf("%s %d", f, pc.Faults[f]))
			if f != faults.Slow {
				resent = append(resent, fmt.Sprintf("after %s %d", f, pc.Resent[f]))
			}
		}
		row("faults", pc.TotalFaults(), fmt.Sprintf("of %d document requests (%d requests in all, %d account/metadata reads never faulted): %s",
			pc.Requests-pc.Metadata, pc.Requests, pc.Metadata, strings.Join(injected, ", ")))
		row("", "", fmt.Sprintf("order creates Cosmos accepted whose answer was lost: %d, answered late: %d; upstream errors: %d; requests failed by outages: %d; point reads answered by a lagging replica: %d",
			r.UnseenCreates[faults.LostAnswer], r.UnseenCreates[faults.Slow], pc.UpstreamErrors, pc.OutageAnswers, pc.StaleReads))
		row("SDK retries", pc.TotalResent(), "requests resent unchanged by the Cosmos SDK or net/http: "+strings.Join(resent, ", "))
	}
}

// printHTTP writes the HTTP API's rows, if the run had it.
func (r *Report) printHTTP(row func(string, any, string)) {
	if h := r.HTTP; h != nil {
		row("HTTP submissions", h.Answers.Keys, h.Answers.String())
		kf := h.KeyFaults
		row("", "", fmt.Sprintf("key completions hit: %d handler kills between the order's batch and the completion, %d lost answers after it stored it (%d aimed but missed); %d stale keys taken over, %d requests fenced (handler log)",
			kf.Kills, kf.LostAnswers, kf.Missed, h.TookOver, h.Fenced))
		for _, s := range kf.Skipped {
			row("", "", "missed: "+s)
		}
	}
}

// printInstances writes the instances' row, and the history check's.
func (r *Report) printInstances(row func(string, any, string)) {
	if r.Instances > 1 {
		back := make([]string, len(r.Kills))
		for i, k := range r.Kills {
			back[i] = fmt.Sprintf("%d +%s", k.Instance, k.Back.Round(10*time.Millisecond))
			if k.Took >= time.Second {
				back[i] += fmt.Sprintf(" (the invocation itself %s)", k.Took.Round(10*time.Millisecond))
			}
			if k.Back == 0 {
				back[i] = fmt.Sprintf("%d none", k.Instance)
			}
			back[i] += r.killDuringOutage(k)
		}
		row("instances", r.Instances, fmt.Sprintf("side by side (scaled out from one and back: %t); first invocation completed after each kill, by instance: %s",
			r.Scaled, strings.Join(back, ", ")))
	}
	if f := r.Findings; f != nil && f.History != nil {
		h := f.History
		row("history", h.Ops, fmt.Sprintf("operations checked for linearizability in %d orderIds (porcupine), in %s; %d not linearizable, %d undecided",
			h.Partitions, h.Took.Round(time.Millisecond), len(h.Illegal), len(h.Undecided)))
	}
}

// killDuringOutage names the outage a kill fell in, and how long it had
// still to run: no invocation can complete before Cosmos DB answers again,
// so such a kill's figure is the outage's rest, not the restart's cost.
func (r *Report) killDuringOutage(k rig.InstanceKill) string {
	for n, o := range r.Outages {
		if !k.At.Before(o.Start) && k.At.Before(o.End) {
			return fmt.Sprintf(" (killed in outage %d, %s before its end)", n+1, o.End.Sub(k.At).Round(10*time.Millisecond))
		}
	}
	return ""
}

// printChecks writes the result of every check, with the first violations
// of those that failed, and the messages given up on with a named reason.
func (r *Report) printChecks(p func(string, ...any)) {
	f := r.Findings
	if f == nil {
		p("  checks not run")
		return
	}
	p("  checks")
	for _, c := range f.Checks {
		status := "ok  "
		if len(c.Violations) > 0 {
			status = "FAIL"
		}
		p("    %s %s (%d checked, %d violations)", status, c.Name, c.Checked, len(c.Violations))
		examples(p, c.Violations, func(v string) string { return v })
	}
	p("    given up with a named reason: %d", len(f.Accounted))
	examples(p, f.Accounted, func(a verify.Accounted) string { return a.MessageID + ": " + a.Reason + ", " + a.Detail })
	if f.Atomic {
		p("    orders without their OrderAccepted outbox event: %d (violations: the batch is atomic)", len(f.OrdersWithoutEvent))
	} else {
		p("    orders without their OrderAccepted outbox event: %d (reported, not counted: the local emulator does not roll a transactional batch back; on Cosmos DB the order and its event commit together or not at all)",
			len(f.OrdersWithoutEvent))
	}
	examples(p, f.OrdersWithoutEvent, func(id string) string { return id })
	p("  invariant violations = %d", f.Violations())
}

// examples prints the first maxExamples items, then how many more.
func examples[T any](p func(string, ...any), items []T, text func(T) string) {
	for i, it := range items {
		if i == maxExamples {
			p("           … %d more", len(items)-maxExamples)
			return
		}
		p("           - %s", text(it))
	}
}

// counts prints a map of counters as "a 1, b 2", largest first.
func counts[K ~string](m map[K]int) string {
	if len(m) == 0 {
		return "none"
	}
	keys := slices.SortedFunc(maps.Keys(m), func(a, b K) int {
		return cmp.Or(cmp.Compare(m[b], m[a]), cmp.Compare(a, b)) // largest first, then by name
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return strings.Join(parts, ", ")
}
