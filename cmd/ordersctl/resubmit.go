package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"

	"github.com/ordersink/orders-consumer/orders"
)

// lockedReceiver is what resubmit needs of a peek-lock receiver on the
// parking queue; *azservicebus.Receiver has it, tests give a fake.
type lockedReceiver interface {
	peeker
	ReceiveMessages(ctx context.Context, max int, o *azservicebus.ReceiveMessagesOptions) ([]*azservicebus.ReceivedMessage, error)
	CompleteMessage(ctx context.Context, m *azservicebus.ReceivedMessage, o *azservicebus.CompleteMessageOptions) error
	AbandonMessage(ctx context.Context, m *azservicebus.ReceivedMessage, o *azservicebus.AbandonMessageOptions) error
}

// messageSender is what resubmit needs of a sender to the orders queue.
type messageSender interface {
	SendMessage(ctx context.Context, m *azservicebus.Message, o *azservicebus.SendMessageOptions) error
}

// receiveWait is how long resubmit waits for the next parked message before
// it takes the parking queue for empty.
var receiveWait = 5 * time.Second

// resubmitSummary is what a bulk resubmit did, printed at the end.
type resubmitSummary struct {
	Resubmitted, Skipped, Failed int
}

// envelope is the part of a parking envelope (contract §6) resubmit reads.
type envelope struct {
	Reason       string `json:"reason"`
	OrderID      string `json:"orderId"`
	MessageID    string `json:"messageId"`
	Subject      string `json:"subject"`
	Body         string `json:"body"`
	BodyEncoding string `json:"bodyEncoding"`
	Truncated    bool   `json:"truncated"`
}

// resubmit sends each parked message whose reason is wanted back to orders,
// then completes it: peek-lock, send, complete, so a crash in between leaves
// at worst a duplicate the consumer absorbs, never a loss. Others are
// abandoned (left in the parking queue). With dryRun nothing is sent or
// completed. It stops after max messages or when the queue has none ready.
func resubmit(ctx context.Context, rcv lockedReceiver, snd messageSender, read decoder, reasons map[string]bool, max int, dryRun bool, w io.Writer) (resubmitSummary, error) {
	var sum resubmitSummary
	if dryRun {
		// Peek: a lock and an abandon would count a delivery of the parked
		// message, and the parking queue dead-letters at 10 of them.
		err := peekAll(ctx, rcv, func(m *azservicebus.ReceivedMessage) error {
			if sum.Skipped >= max {
				return nil
			}
			sum.Skipped++
			msg, env, why := resubmission(m, read, reasons)
			if why == "" {
				why = "dry run: would send to orders as " + *msg.MessageID
			}
			fmt.Fprintf(w, "skip %s (%s): %s\n", env.OrderID, env.Reason, why)
			return nil
		})
		return sum, err
	}
	for seen := 0; seen < max; {
		// ReceiveMessages waits until a message arrives: an empty queue is
		// one that yields none within receiveWait.
		wait, cancel := context.WithTimeout(ctx, receiveWait)
		batch, err := rcv.ReceiveMessages(wait, min(10, max-seen), nil)
		cancel()
		if err != nil && !(errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil) {
			return sum, fmt.Errorf("receive from the parking queue: %w", err)
		}
		if len(batch) == 0 {
			break
		}
		for _, m := range batch {
			seen++
			msg, env, why := resubmission(m, read, reasons)
			if why != "" {
				fmt.Fprintf(w, "skip %s (%s): %s\n", env.OrderID, env.Reason, why)
				sum.Skipped++
				if err := rcv.AbandonMessage(ctx, m, nil); err != nil {
					return sum, fmt.Errorf("abandon parked message %s: %w", m.MessageID, err)
				}
				continue
			}
			if err := snd.SendMessage(ctx, msg, nil); err != nil {
				sum.Failed++
				fmt.Fprintf(w, "FAILED %s: send to orders: %v\n", env.OrderID, err)
				_ = rcv.AbandonMessage(ctx, m, nil) // the lock expires anyway
				continue
			}
			if err := rcv.CompleteMessage(ctx, m, nil); err != nil {
				// Sent but still parked: a second resubmit gives the consumer
				// a duplicate, which it absorbs.
				sum.Failed++
				fmt.Fprintf(w, "FAILED %s: sent, but completing the parked message failed: %v\n", env.OrderID, err)
				continue
			}
			sum.Resubmitted++
			fmt.Fprintf(w, "resubmitted %s as %s\n", env.OrderID, *msg.MessageID)
		}
	}
	return sum, nil
}

// resubmitMessageID is the contract §3 MessageId with ":r<unix seconds>"
// added (at most 126 characters). Without it a message resubmitted inside
// the queue's duplicate-detection window of its original send (a consumer
// that failed fast ten times, say) would carry the same MessageId and be
// dropped by the broker while its parked copy is completed: a loss.
func resubmitMessageID(orderID string, body []byte, now time.Time) string {
	return orders.MessageID(orderID, body) + ":r" + strconv.FormatInt(now.Unix(), 10)
}

// decoder reads what resubmit needs from a received message.
type decoder func(*azservicebus.ReceivedMessage) (envelope, error)

// fromParking reads a parking envelope (contract §6).
func fromParking(m *azservicebus.ReceivedMessage) (envelope, error) {
	var env envelope
	if err := json.Unmarshal(m.Body, &env); err != nil {
		return env, fmt.Errorf("not a parking envelope: %w", err)
	}
	return env, nil
}

// fromBrokerDeadLetter reads a message the broker dead-lettered: the
// original message, whose reason is the broker's.
func fromBrokerDeadLetter(m *azservicebus.ReceivedMessage) (envelope, error) {
	p := fromDeadLetter(m.MessageID, int(m.DeliveryCount), deref(m.DeadLetterReason), "", string(m.Body))
	env := envelope{Reason: p.Reason, OrderID: p.OrderID, MessageID: m.MessageID, Subject: deref(m.Subject), Body: string(m.Body)}
	if !utf8.Valid(m.Body) {
		env.Body, env.BodyEncoding = base64.StdEncoding.EncodeToString(m.Body), "base64"
	}
	return env, nil
}

// resubmission is the message to send for a parked one, or why not.
func resubmission(m *azservicebus.ReceivedMessage, read decoder, reasons map[string]bool) (*azservicebus.Message, envelope, string) {
	env, err := read(m)
	if err != nil {
		return nil, env, err.Error()
	}
	if reasons != nil && !reasons[env.Reason] {
		return nil, env, "reason not selected (--reason)"
	}
	if env.Truncated {
		return nil, env, "the envelope holds only the start of the body"
	}
	body := []byte(env.Body)
	if env.BodyEncoding == "base64" {
		var err error
		if body, err = base64.StdEncoding.DecodeString(env.Body); err != nil {
			return nil, env, "body is not base64: " + err.Error()
		}
	}
	id := env.OrderID
	if id == "" {
		id = env.MessageID
	}
	msg := &azservicebus.Message{Body: body, MessageID: to.Ptr(resubmitMessageID(id, body, time.Now())), ContentType: to.Ptr("application/json")}
	if env.Subject != "" {
		msg.Subject = to.Ptr(env.Subject)
	}
	return msg, env, ""
}

// parkedResubmit is `parked resubmit`: Azure only, with Entra ID.
func parkedResubmit(ctx context.Context, args []string, getenv func(string) string, w io.Writer) error {
	fs := flag.NewFlagSet("parked resubmit", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	ns := fs.String("namespace", getenv("SERVICEBUS_FULLY_QUALIFIED_NAMESPACE"), "Service Bus namespace, sb-….servicebus.windows.net")
	parking := fs.String("parking-queue", "orders-deadletter", "the parking queue")
	max := fs.Int("max", 100, "stop after this many parked messages")
	dryRun := fs.Bool("dry-run", false, "show what would be resubmitted; send and complete nothing")
	deadLetter := fs.Bool("dead-letter", false, "redrive orders' dead-letter sub-queue instead (every reason unless --reason)")
	reasons := map[string]bool{}
	fs.Func("reason", "a reason to resubmit (repeatable; default RetryBudgetExhausted)", func(v string) error { reasons[v] = true; return nil })
	if err := fs.Parse(args); err != nil {
		return usageErr(err)
	}
	if *ns == "" || fs.NArg() != 0 || *max < 1 {
		return fmt.Errorf("%w: parked resubmit --namespace NS [--reason R]... [--max N] [--dry-run]", errUsage)
	}
	read := decoder(fromParking)
	switch {
	case *deadLetter:
		read = fromBrokerDeadLetter
		if len(reasons) == 0 {
			reasons = nil // the broker's reasons do not tell a good order from a bad one
		}
	case len(reasons) == 0:
		reasons[string(orders.RetryBudgetExhausted)] = true
	}
	for r := range reasons {
		if !*deadLetter && r != string(orders.RetryBudgetExhausted) {
			fmt.Fprintf(w, "warning: %s messages are refused on every delivery unless the producer or the consumer changed since\n", r)
		}
	}
	client, err := newClient(*ns)
	if err != nil {
		return err
	}
	defer client.Close(context.WithoutCancel(ctx))
	var rcvOpts *azservicebus.ReceiverOptions
	queue := *parking
	if *deadLetter {
		queue, rcvOpts = "orders", &azservicebus.ReceiverOptions{SubQueue: azservicebus.SubQueueDeadLetter}
	}
	rcv, err := client.NewReceiverForQueue(queue, rcvOpts)
	if err != nil {
		return err
	}
	snd, err := client.NewSender("orders", nil)
	if err != nil {
		return err
	}
	sum, err := resubmit(ctx, rcv, snd, read, reasons, *max, *dryRun, w)
	fmt.Fprintf(w, "%d resubmitted, %d skipped, %d failed\n", sum.Resubmitted, sum.Skipped, sum.Failed)
	if err == nil && sum.Failed > 0 {
		err = fmt.Errorf("%d parked message(s) were not resubmitted", sum.Failed)
	}
	return err
}
