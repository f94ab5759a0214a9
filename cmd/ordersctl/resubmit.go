package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strconv"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"

	"github.com/ordersink/orders-consumer/orders"
)

var parkedResubmitCmd = &command{
	name:     "parked resubmit",
	synopsis: "[--namespace NS | --connection-string CS | --local DIR [--stream FILE]] [--from Q] [--reason R]... [--order ID] [--older-than D] [--max N] [--dry-run] [--yes] [<orderId | messageId | sequence number>...]",
	about: `Sends parked messages back to the orders queue, then completes them: the original body (read
from Cosmos DB when the envelope has only a bodyRef), its Subject, and the contract §3 MessageId
plus ":r<unix time>", so the queue's duplicate detection never drops a resubmission sent inside the
window of the original. Receive in peek-lock, send, complete: a crash in between leaves at worst a
duplicate the consumer absorbs (it deduplicates on orderId), never a loss.

Without names it takes every message of the chosen reasons (default RetryBudgetExhausted; others
print a warning: a mismatch or an invalid message is refused again unless the producer or the
consumer changed). Named messages are resubmitted whatever their reason. --from deadletter
redrives orders/$deadletterqueue (every broker reason), --from parked-deadletter the parking
queue's own. A truncated envelope is skipped and stays parked. It lists what it will resubmit
and asks for confirmation (--yes skips it; off a terminal --yes is required). A body kept in
Cosmos DB is deleted once its message is completed and no other parked message points at it.

Locally the orders queue is a stream file: deliver it with
  bin/localrun -stream .local/hostemu/send.jsonl -database <the run's database> -resume`,
	examples: []string{
		"ordersctl parked resubmit --namespace \"$NS\" --dry-run",
		"ordersctl parked resubmit --namespace \"$NS\" --older-than 10m --output json | jq .summary",
		"ordersctl parked resubmit --namespace \"$NS\" --reason ValidationFailed ORD-2026-000123",
		"ordersctl parked resubmit --namespace \"$NS\" --from deadletter --dry-run",
		"ordersctl parked resubmit --local .local/hostemu && bin/localrun -stream .local/hostemu/send.jsonl -database hostemu-… -resume",
	},
	run: parkedResubmit,
}

func parkedResubmit(ctx context.Context, c *cli, cmd *command, args []string) error {
	ch := &change{cmd: cmd}
	fs := flag.NewFlagSet(cmd.name, flag.ContinueOnError)
	ch.register(fs, c, "a reason to resubmit (repeatable; default RetryBudgetExhausted on the parking queue, elsewhere every reason)")
	ch.qf.registerStream(fs)
	if err := ch.qf.parse(cmd, fs, args); err != nil {
		return err
	}
	if ch.max < 1 {
		return usagef(cmd, "--max must be at least 1")
	}
	ch.sel.refs = fs.Args()
	if ch.sel.reasons == nil && len(ch.sel.refs) == 0 && ch.sel.queue == parkingQueue {
		ch.sel.reasons = map[string]bool{string(orders.RetryBudgetExhausted): true}
	}
	q, err := ch.qf.open()
	if err != nil {
		return err
	}
	defer q.Close(context.WithoutCancel(ctx))
	var snd messageSender
	if !ch.dryRun {
		if snd, err = q.Sender(); err != nil {
			return fmt.Errorf("open the orders queue: %w", err)
		}
	}
	bodies := ch.bodies
	warned := map[string]bool{}
	plan := func(p Parked) step {
		s := step{out: outcomeOf(p, "resubmit")}
		msg, err := resubmission(ctx, p, bodies, time.Now())
		if err != nil {
			s.out.Action, s.out.Detail = "skipped", err.Error()
			return s
		}
		if p.Queue != deadLetterQueue && p.Reason != string(orders.RetryBudgetExhausted) && !warned[p.Reason] {
			warned[p.Reason] = true
			fmt.Fprintf(c.stderr, "warning: %s messages are refused again on every delivery unless the producer or the consumer changed since\n", p.Reason)
		}
		s.out.NewMessageID = *msg.MessageID
		s.act = func(ctx context.Context, _ Parked) error {
			// Each send has its own deadline, and Settle's ctx ends before
			// the message's lock does, so one hung send cannot hold every
			// lock of the run past its expiry.
			sendCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
			defer cancel()
			if err := snd.SendMessage(sendCtx, msg, nil); err != nil {
				return fmt.Errorf("send to orders: %w", err)
			}
			return nil
		}
		return s
	}
	return ch.apply(ctx, c, q, plan, "resubmit", "resubmitted")
}

// resubmitMessageID is the contract §3 MessageId with ":r<unix seconds>"
// added (at most 126 characters). Without it a message resubmitted inside
// the queue's duplicate-detection window of its original send (a consumer
// that failed fast ten times, say) would carry the same MessageId and be
// dropped by the broker while its parked copy is completed: a loss.
func resubmitMessageID(orderID string, body []byte, now time.Time) string {
	return orders.MessageID(orderID, body) + ":r" + strconv.FormatInt(now.Unix(), 10)
}

// resubmission is the message to send to orders for a parked one.
func resubmission(ctx context.Context, p Parked, bodies *parkedBodies, now time.Time) (*azservicebus.Message, error) {
	if p.Reason == notAnEnvelope {
		return nil, errors.New("not a parking envelope, so not known to be an order: deal with it, then complete it")
	}
	if p.Reason == string(orders.Unpublishable) {
		// Its body is an outbox event document, not an order: orders would
		// park it again. The fix is to the document (docs/runbook.md).
		return nil, errors.New("an outbox event the publisher could not send, not an order: fix the document, then complete this")
	}
	body, err := p.originalBody(ctx, bodies)
	if err != nil {
		return nil, err
	}
	id := p.OrderID
	if id == "" {
		id = p.MessageID
	}
	msg := &azservicebus.Message{Body: body, MessageID: to.Ptr(resubmitMessageID(id, body, now)), ContentType: to.Ptr("application/json")}
	if p.Subject != "" {
		msg.Subject = to.Ptr(p.Subject)
	}
	return msg, nil
}
