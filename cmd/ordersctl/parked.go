package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/ordersink/orders-consumer/orders"
)

// Queue kinds a parked message is in, as --from names them.
const (
	parkingQueue    = "parking"    // the parking queue, envelopes of docs/contract.md §6
	deadLetterQueue = "deadletter" // orders' dead-letter sub-queue, the original messages
	// parkedDeadLetterQueue is the parking queue's own dead-letter sub-queue:
	// envelopes the broker moved there (a walk past one on its last
	// delivery, say). Parked messages never expire, so nothing else does.
	parkedDeadLetterQueue = "parked-deadletter"
)

// queueKinds are the queues in the order a listing reads them.
var queueKinds = []string{parkingQueue, deadLetterQueue, parkedDeadLetterQueue}

// Parked is one parked or dead-lettered message, as the table and the JSON
// output show it and as resubmit reads it.
type Parked struct {
	Queue string `json:"queue"` // one of queueKinds
	// SequenceNumber names the message in its queue: the broker's, or the
	// line's in the local files.
	SequenceNumber int64  `json:"sequenceNumber"`
	OrderID        string `json:"orderId,omitempty"`
	MessageID      string `json:"messageId"` // of the original message
	Reason         string `json:"reason"`
	DeliveryCount  int    `json:"deliveryCount"`
	ParkedAt       string `json:"parkedAt,omitempty"`
	Description    string `json:"description"`
	Subject        string `json:"subject,omitempty"`
	Body           string `json:"body,omitempty"`
	BodyEncoding   string `json:"bodyEncoding,omitempty"` // "base64" for a body that is not UTF-8
	// BodyRef and BodySHA256 name a body kept in Cosmos DB because the
	// envelope could not carry it (contract §6).
	BodyRef    *bodyRef `json:"bodyRef,omitempty"`
	BodySHA256 string   `json:"bodySha256,omitempty"`
	Truncated  bool     `json:"truncated,omitempty"`
	// BrokerReason is why the broker moved an envelope to the
	// parked-deadletter queue, with its description.
	BrokerReason string `json:"brokerReason,omitempty"`
	// Diff is, for a HashMismatch that parked show or order show prints,
	// what differs between its body and the stored order.
	Diff *orders.Diff `json:"diff,omitempty"`
}

type bodyRef struct {
	ID           string `json:"id"`
	PartitionKey string `json:"partitionKey"`
}

// notAnEnvelope is the reason ordersctl gives a parking-queue message that
// is not a parking envelope (docs/contract.md §6): listed and shown with its
// body so it can be dealt with and completed, never resubmitted.
const notAnEnvelope = "NotAnEnvelope"

// fromEnvelope reads a parking envelope (contract §6).
// A message that is not one is described as notAnEnvelope, messageID being
// its own MessageId, so one stray message never stops the work on the others.
func fromEnvelope(seq int64, messageID string, b []byte) Parked {
	var p Parked
	if err := json.Unmarshal(b, &p); err != nil {
		p = Parked{MessageID: messageID, Reason: notAnEnvelope, Description: "not a parking envelope (docs/contract.md §6): " + err.Error()}
		p.setBody(b)
	}
	p.Queue, p.SequenceNumber = parkingQueue, seq // not the envelope's to say
	return p
}

// setBody keeps b as text, or in base64 when it is not UTF-8.
func (p *Parked) setBody(b []byte) {
	p.Body, p.BodyEncoding = string(b), ""
	if !utf8.Valid(b) {
		p.Body, p.BodyEncoding = base64.StdEncoding.EncodeToString(b), "base64"
	}
}

// fromDeadLetter describes a message the broker dead-lettered: its body is
// the original message, whose orderId is read when it has one.
func fromDeadLetter(seq int64, messageID string, deliveries int, reason, description, subject string, body []byte) Parked {
	var head struct {
		OrderID string `json:"orderId"`
	}
	_ = json.Unmarshal(body, &head) // a body that is not an order has no orderId
	p := Parked{Queue: deadLetterQueue, SequenceNumber: seq, OrderID: head.OrderID, MessageID: messageID, Reason: reason,
		DeliveryCount: deliveries, Description: description, Subject: subject}
	p.setBody(body)
	return p
}

// queueFlags say where the parked messages are and how to print them.
type queueFlags struct {
	namespace, dir, parkingQueue, output string
	// connectionString reaches the Service Bus emulator (local/compose.yaml).
	connectionString string
	stream           string // the local orders queue (registerStream)
}

func (f *queueFlags) register(fs *flag.FlagSet, c *cli) {
	fs.StringVar(&f.namespace, "namespace", c.getenv("SERVICEBUS_FULLY_QUALIFIED_NAMESPACE"), "Azure Service Bus namespace, sb-….servicebus.windows.net; empty: the local files")
	fs.StringVar(&f.connectionString, "connection-string", c.getenv("SERVICEBUS_CONNECTION_STRING"), "the Service Bus emulator's connection string (UseDevelopmentEmulator=true), instead of --namespace")
	fs.StringVar(&f.dir, "local", ".local/hostemu", "folder of the local host emulator's files (without --namespace or --connection-string)")
	fs.StringVar(&f.parkingQueue, "parking-queue", "orders-deadletter", "the parking queue")
	fs.StringVar(&f.output, "output", "table", "table or json")
}

// registerStream adds --stream, for the commands that send to orders.
func (f *queueFlags) registerStream(fs *flag.FlagSet) {
	fs.StringVar(&f.stream, "stream", ".local/hostemu/send.jsonl", "local mode: the stream file that stands for the orders queue")
}

func (f *queueFlags) check(cmd *command) error {
	if f.output != "table" && f.output != "json" {
		return usagef(cmd, "--output %q: want table or json", f.output)
	}
	if f.namespace != "" && !strings.Contains(f.namespace, ".") {
		// The SDK would retry a name that resolves nowhere until the deadline.
		return usagef(cmd, "--namespace %q: want the fully qualified name, %s.servicebus.windows.net", f.namespace, f.namespace)
	}
	if f.connectionString != "" {
		if f.namespace != "" {
			return usagef(cmd, "give --namespace (Azure) or --connection-string (the Service Bus emulator), not both")
		}
		if err := checkConnectionString(f.connectionString); err != nil {
			return usagef(cmd, "--connection-string: %v", err)
		}
	}
	return nil
}

// parse parses args into fs, on which f is registered, and checks f.
func (f *queueFlags) parse(cmd *command, fs *flag.FlagSet, args []string) error {
	if err := parse(cmd, fs, args); err != nil {
		return err
	}
	return f.check(cmd)
}

// openAzure opens the Service Bus queues; tests replace it with fakes.
var openAzure = func(sb serviceBus, parking string) (queues, error) { return newAzureQueues(sb, parking) }

// open returns the queues the flags name.
func (f *queueFlags) open() (queues, error) {
	if f.namespace == "" && f.connectionString == "" {
		return &localQueues{dir: f.dir, parkingQueue: f.parkingQueue, stream: f.stream}, nil
	}
	return openAzure(serviceBus{namespace: f.namespace, connectionString: f.connectionString}, f.parkingQueue)
}

var parkedListCmd = &command{
	name:     "parked list",
	synopsis: "[--namespace NS | --connection-string CS | --local DIR] [--from Q] [--reason R]... [--order ID] [--older-than D] [--output table|json]",
	about: `Lists the parking queue, then orders' dead-letter sub-queue (deadletter), then the parking
queue's own dead-letter sub-queue (parked-deadletter): sequence number, orderId, messageId,
reason, deliveries, parked at and a one-line description. The queues are peeked (nothing is
locked or changed; up to 1000 messages each, with a warning on stderr when a queue holds more).
The local files have no parked-deadletter queue: nothing receives from the local parking queue.`,
	examples: []string{
		"ordersctl parked list",
		"ordersctl parked list --namespace \"$NS\" --from parked-deadletter",
		"ordersctl parked list --namespace \"$NS\" --reason RetryBudgetExhausted --older-than 1h",
		"ordersctl parked list --output json | jq 'group_by(.reason) | map({(.[0].reason): length}) | add'",
	},
	run: parkedList,
}

func parkedList(ctx context.Context, c *cli, cmd *command, args []string) error {
	var (
		qf  queueFlags
		sel filter
	)
	fs := flag.NewFlagSet(cmd.name, flag.ContinueOnError)
	qf.register(fs, c)
	sel.register(fs, "only this reason (repeatable)", "default: every queue")
	if err := qf.parse(cmd, fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef(cmd, "unexpected argument %q", fs.Arg(0))
	}
	all, err := list(ctx, c, &qf)
	if err != nil {
		return err
	}
	return writeParked(c.stdout, qf.output, sel.selectFrom(all))
}

// list reads every parked and dead-lettered message the flags name.
func list(ctx context.Context, c *cli, qf *queueFlags) ([]Parked, error) {
	q, err := qf.open()
	if err != nil {
		return nil, err
	}
	defer q.Close(context.WithoutCancel(ctx))
	return listWarning(ctx, c, q)
}

// listWarning lists q, warning on stderr of any queue that holds more than
// a listing reads: those beyond are neither shown nor chosen.
func listWarning(ctx context.Context, c *cli, q queues) ([]Parked, error) {
	all, err := q.List(ctx)
	if err != nil {
		return nil, err
	}
	for _, queue := range q.Cut() {
		fmt.Fprintf(c.stderr, "warning: the %s queue holds more than %d messages; only the first %d (the oldest) are listed or chosen\n", queue, maxPeek, maxPeek)
	}
	return all, nil
}

var parkedShowCmd = &command{
	name:     "parked show",
	synopsis: "[--namespace NS | --connection-string CS | --local DIR] [--output table|json] <orderId | messageId | sequence number>",
	about: `Shows every parked or dead-lettered message of an order (or the one with that messageId or
sequence number) in full: the envelope's fields and the original body. For a HashMismatch it
lists what differs from the order stored under its orderId, as JSON Pointer paths with both
values (/lines/2/quantity: 2 → 3), compared as the fingerprint compares (canonical form, meta
left out); this reads Cosmos DB (COSMOS_ENDPOINT…, as order show).`,
	examples: []string{
		"ordersctl parked show ORD-2026-000123",
		"ordersctl parked show --namespace \"$NS\" --output json 42 | jq -r .[0].body",
	},
	run: parkedShow,
}

func parkedShow(ctx context.Context, c *cli, cmd *command, args []string) error {
	var qf queueFlags
	fs := flag.NewFlagSet(cmd.name, flag.ContinueOnError)
	qf.register(fs, c)
	if err := qf.parse(cmd, fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usagef(cmd, "give one orderId, messageId or sequence number")
	}
	all, err := list(ctx, c, &qf)
	if err != nil {
		return err
	}
	sel := filter{refs: fs.Args()}
	out := sel.selectFrom(all)
	if len(out) == 0 {
		return &notFoundError{what: fs.Arg(0)}
	}
	addDiffs(ctx, c, out, &parkedBodies{getenv: c.getenv})
	if qf.output == "json" {
		return writeJSON(c.stdout, out)
	}
	for _, p := range out {
		fmt.Fprintf(c.stdout, "queue:          %s\nsequence:       %d\norderId:        %s\nmessageId:      %s\nreason:         %s\ndeliveries:     %d\nparked at:      %s\ndescription:    %s\n",
			p.Queue, p.SequenceNumber, p.OrderID, p.MessageID, p.Reason, p.DeliveryCount, p.ParkedAt, p.Description)
		if p.Subject != "" {
			fmt.Fprintf(c.stdout, "subject:        %s\n", p.Subject)
		}
		if p.BrokerReason != "" {
			fmt.Fprintf(c.stdout, "dead-lettered:  %s\n", p.BrokerReason)
		}
		switch {
		case p.BodyRef != nil:
			fmt.Fprintf(c.stdout, "body:           in Cosmos DB, %s in partition %s (%s), kept until this message is settled\n", p.BodyRef.ID, p.BodyRef.PartitionKey, p.BodySHA256)
		case p.BodyEncoding != "":
			fmt.Fprintf(c.stdout, "body (%s): %s\n", p.BodyEncoding, p.Body)
		default:
			fmt.Fprintf(c.stdout, "body:           %s\n", p.Body)
		}
		if p.Diff != nil {
			writeDiff(c.stdout, "", p.Diff)
		}
		fmt.Fprintln(c.stdout)
	}
	return nil
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func writeParked(w io.Writer, output string, ps []Parked) error {
	if output == "json" {
		if ps == nil {
			ps = []Parked{}
		}
		return writeJSON(w, ps)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "QUEUE\tSEQ\tORDER ID\tMESSAGE ID\tREASON\tDELIVERIES\tPARKED AT\tDESCRIPTION")
	for _, p := range ps {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%d\t%s\t%s\n", p.Queue, p.SequenceNumber, p.OrderID, p.MessageID, p.Reason,
			p.DeliveryCount, p.ParkedAt, oneLine(p.Description, 80))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "%d message(s)\n", len(ps))
	return err
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
