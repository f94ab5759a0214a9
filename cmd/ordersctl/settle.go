package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/schollz/progressbar/v3"
)

// change is a command that settles parked messages: complete or resubmit.
// Both choose from a listing (a peek in Azure), print the plan, stop there
// with --dry-run, and then settle exactly the messages chosen, by sequence
// number, so a message parked after the listing is never touched.
type change struct {
	cmd    *command
	qf     queueFlags
	sel    filter
	dryRun bool
	yes    bool
	max    int
	bodies *parkedBodies
}

func (ch *change) register(fs *flag.FlagSet, c *cli, reasonHelp string) {
	ch.qf.register(fs, c)
	ch.sel.queue = parkingQueue
	ch.sel.register(fs, reasonHelp, "default "+parkingQueue)
	fs.BoolVar(&ch.dryRun, "dry-run", false, "print what would be done; change nothing")
	fs.BoolVar(&ch.yes, "yes", false, "do not ask for confirmation (needed when stdin is not a terminal)")
	fs.IntVar(&ch.max, "max", 100, "act on at most this many messages")
	ch.bodies = &parkedBodies{getenv: c.getenv}
}

// step is what a change will do to one message: act, or nothing when
// out.Detail says why not.
type step struct {
	out    outcome
	parked Parked
	act    actFunc
}

// outcome is one message's line in the result.
type outcome struct {
	Queue          string `json:"queue"`
	SequenceNumber int64  `json:"sequenceNumber"`
	OrderID        string `json:"orderId,omitempty"`
	MessageID      string `json:"messageId"`
	Reason         string `json:"reason"`
	// Action: completed, resubmitted, would complete, would resubmit,
	// skipped (Detail says why), failed (Detail), gone (no longer in the
	// queue when it was settled).
	Action       string `json:"action"`
	NewMessageID string `json:"newMessageId,omitempty"`
	Detail       string `json:"detail,omitempty"`
	// Body is what became of a body kept in Cosmos DB once its message was
	// settled: "deleted", or why it is still there.
	Body string `json:"body,omitempty"`
}

// summary counts the outcomes; scripts read it from --output json.
type summary struct {
	DryRun  bool `json:"dryRun"`
	Done    int  `json:"done"`
	Skipped int  `json:"skipped"`
	Failed  int  `json:"failed"`
	Gone    int  `json:"gone"`
	// Seconds is how long settling took (0 for a dry run).
	Seconds float64 `json:"seconds"`
}

func outcomeOf(p Parked, action string) outcome {
	return outcome{Queue: p.Queue, SequenceNumber: p.SequenceNumber, OrderID: p.OrderID, MessageID: p.MessageID, Reason: p.Reason, Action: action}
}

// apply runs a change: plan turns each selected message into a step, verb
// and done name the action ("complete", "completed"). The operator says yes
// first (or --yes), and a selection that matches nothing is an error (exit 3),
// so a script never takes a mistyped filter for an empty queue.
func (ch *change) apply(ctx context.Context, c *cli, q queues, plan func(Parked) step, verb, done string) error {
	all, err := listWarning(ctx, c, q)
	if err != nil {
		return err
	}
	var selected []Parked
	for _, p := range ch.sel.selectFrom(all) {
		if len(selected) < ch.max {
			selected = append(selected, p)
		}
	}
	if len(selected) == 0 {
		return &notFoundError{what: ch.sel.String()}
	}
	steps := make([]step, len(selected))
	chosen := map[int64]bool{}
	for i, p := range selected {
		steps[i] = plan(p)
		steps[i].parked = p
		if steps[i].act != nil && p.BodyRef != nil && ch.bodies.open() != nil {
			// Parked bodies never expire: settled without it, its body would
			// stay for ever with nothing pointing at it.
			steps[i].act, steps[i].out.Action = nil, "skipped"
			steps[i].out.Detail = fmt.Sprintf("its body is kept in Cosmos DB (%s), which must be deleted with it: %v", p.BodyRef.ID, ch.bodies.open())
		}
		if steps[i].act != nil {
			chosen[p.SequenceNumber] = true
			if ch.dryRun {
				steps[i].out.Action = "would " + verb
			}
		}
	}
	sum := summary{DryRun: ch.dryRun}
	// settleNone reports the steps when nothing is to be settled.
	settleNone := func() error {
		if err := report(c.stdout, ch.qf.output, steps, sum); err != nil {
			return err
		}
		return incomplete(steps, verb)
	}
	if ch.dryRun || len(chosen) == 0 {
		return settleNone()
	}
	if !ch.yes {
		if c.confirm == nil {
			return usagef(ch.cmd, "%s %d message(s): confirm on a terminal, or pass --yes (after a --dry-run)", verb, len(chosen))
		}
		if err := writeSteps(c.stderr, steps); err != nil {
			return err
		}
		if !c.confirm(fmt.Sprintf("%s these %d message(s) in the %s queue?", verb, len(chosen), ch.sel.queue)) {
			return errDeclined
		}
	}
	versions := ch.bodyVersions(ctx, steps, chosen)
	if len(chosen) == 0 {
		return settleNone()
	}
	bySeq := map[int64]*step{}
	for i := range steps {
		bySeq[steps[i].out.SequenceNumber] = &steps[i]
	}
	tick, finish := bar(c.progress, walkLength(all, ch.sel.queue, chosen), verb)
	start := time.Now()
	results, settleErr := q.Settle(ctx, ch.sel.queue, chosen, func(ctx context.Context, p Parked) error {
		return bySeq[p.SequenceNumber].act(ctx, p)
	}, tick)
	finish()
	sum.Seconds = time.Since(start).Seconds()
	for i := range steps {
		s := &steps[i]
		if s.act == nil {
			continue
		}
		switch err, met := results[s.out.SequenceNumber]; {
		case !met:
			s.out.Action, s.out.Detail = "gone", "not met while settling: settled or locked by someone else, or not reached before the locks held ran out (run again)"
		case err != nil:
			s.out.Action, s.out.Detail = "failed", err.Error()
		default:
			s.out.Action = done
		}
	}
	ch.deleteBodies(ctx, c, q, steps, versions)
	if err := report(c.stdout, ch.qf.output, steps, sum); err != nil {
		return err
	}
	if settleErr != nil {
		return settleErr
	}
	return incomplete(steps, verb)
}

// walkLength is how many messages reaching the chosen ones passes: those
// listed in queue up to the last chosen (the progress bar's length).
func walkLength(all []Parked, queue string, chosen map[int64]bool) int {
	n, walk := 0, 0
	for _, p := range all {
		if p.Queue == queue {
			n++
			if chosen[p.SequenceNumber] {
				walk = n
			}
		}
	}
	return walk
}

// incomplete is the error (exit 1) when some message selected was skipped,
// failed or gone: a script must not take the queue for dealt with.
func incomplete(steps []step, verb string) error {
	for _, s := range steps {
		if a := s.out.Action; a == "skipped" || a == "failed" || a == "gone" {
			return fmt.Errorf("could not %s every message selected (see above); those stay in the queue", verb)
		}
	}
	return nil
}

// report prints the outcomes and their summary.
func report(w io.Writer, output string, steps []step, sum summary) error {
	outs := make([]outcome, 0, len(steps))
	for _, s := range steps {
		switch s.out.Action {
		case "completed", "resubmitted", "would complete", "would resubmit":
			sum.Done++
		case "skipped":
			sum.Skipped++
		case "failed":
			sum.Failed++
		case "gone":
			sum.Gone++
		}
		outs = append(outs, s.out)
	}
	if output == "json" {
		return writeJSON(w, struct {
			Results []outcome `json:"results"`
			Summary summary   `json:"summary"`
		}{outs, sum})
	}
	if err := writeSteps(w, steps); err != nil {
		return err
	}
	verb := "done"
	if sum.DryRun {
		verb = "would be done (dry run)"
	}
	_, err := fmt.Fprintf(w, "%d %s, %d skipped, %d failed, %d gone (%.1f s)\n", sum.Done, verb, sum.Skipped, sum.Failed, sum.Gone, sum.Seconds)
	return err
}

func writeSteps(w io.Writer, steps []step) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "QUEUE\tSEQ\tORDER ID\tMESSAGE ID\tREASON\tACTION\tDETAIL")
	for _, s := range steps {
		o := s.out
		detail := o.Detail
		if o.NewMessageID != "" && detail == "" {
			detail = "as " + o.NewMessageID
		}
		if o.Body != "" {
			detail = strings.TrimPrefix(detail+"; body "+o.Body, "; ")
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\n", o.Queue, o.SequenceNumber, o.OrderID, o.MessageID, o.Reason, o.Action, oneLine(detail, 100))
	}
	return tw.Flush()
}

// bar draws a progress bar of n messages walked on w; nil w (not a terminal) draws
// none, so pipes and tests stay clean.
func bar(w io.Writer, n int, what string) (tick, finish func()) {
	if w == nil || n < 2 {
		return func() {}, func() {}
	}
	b := progressbar.NewOptions(n, progressbar.OptionSetWriter(w), progressbar.OptionSetDescription(what),
		progressbar.OptionShowCount(), progressbar.OptionShowIts(), progressbar.OptionSetItsString("msg"),
		progressbar.OptionSetWidth(30), progressbar.OptionThrottle(100*time.Millisecond), progressbar.OptionClearOnFinish())
	return func() { _ = b.Add(1) }, func() { _ = b.Finish() }
}

var parkedCompleteCmd = &command{
	name:     "parked complete",
	synopsis: "[--namespace NS | --connection-string CS | --local DIR] [--from Q] [--reason R]... [--order ID] [--older-than D] [--dry-run] [--yes] [<orderId | messageId | sequence number>...]",
	about: `Completes (removes) parked messages once dealt with, so the parked-orders alert resolves: those
named by orderId, messageId or sequence number (parked list shows them), or all that match
--reason, --order or --older-than; at least one of these is required. It lists what it will
remove and asks for confirmation (--yes skips it; off a terminal --yes is required). In Azure it
receives in peek-lock from the head of the queue up to the chosen messages: each message it
passes counts a delivery and is abandoned. --from deadletter works on orders/$deadletterqueue,
--from parked-deadletter on the parking queue's own. A body kept in Cosmos DB (contract §6) is
deleted once its message is completed and no other parked message points at it.`,
	examples: []string{
		"ordersctl parked complete --dry-run 17",
		"ordersctl parked complete --namespace \"$NS\" ORD-2026-000123",
		"ordersctl parked complete --namespace \"$NS\" --reason MalformedMessage --older-than 24h --yes --output json",
	},
	run: parkedComplete,
}

func parkedComplete(ctx context.Context, c *cli, cmd *command, args []string) error {
	ch := &change{cmd: cmd}
	fs := flag.NewFlagSet(cmd.name, flag.ContinueOnError)
	ch.register(fs, c, "only this reason (repeatable)")
	if err := ch.qf.parse(cmd, fs, args); err != nil {
		return err
	}
	ch.sel.refs = fs.Args()
	if len(ch.sel.refs) == 0 && ch.sel.reasons == nil && ch.sel.order == "" && ch.sel.olderThan == 0 {
		return usagef(cmd, "name the messages, or select them with --reason, --order or --older-than")
	}
	q, err := ch.qf.open()
	if err != nil {
		return err
	}
	defer q.Close(context.WithoutCancel(ctx))
	return ch.apply(ctx, c, q, func(p Parked) step {
		return step{out: outcomeOf(p, "complete"), act: func(context.Context, Parked) error { return nil }}
	}, "complete", "completed")
}
