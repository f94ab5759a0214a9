package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/ordersink/orders-consumer/producer"
)

var sendCmd = &command{
	name:     "send",
	synopsis: "[--namespace NS | --connection-string CS | --stream FILE] [--status] [--dry-run] [--output table|json] <body.json>",
	about: `Sends one body to the orders queue as a producer must (package producer): ContentType
application/json, Subject OrderPlaced (OrderStatusChanged with --status) and the contract §3
MessageId, "<orderId>:<16 hex digits of the body's SHA-256>". The body's bytes are sent as they
are in the file. Without a namespace the message is appended to a stream file that
bin/localrun -stream FILE delivers.`,
	examples: []string{
		"ordersctl send --namespace \"$NS\" bicep/deploy/sample-order.json",
		"ordersctl send --namespace \"$NS\" --status --dry-run shipped.json",
		"ordersctl send bicep/deploy/sample-order.json && bin/localrun -stream .local/hostemu/send.jsonl",
		"SERVICEBUS_CONNECTION_STRING='Endpoint=sb://localhost;…;UseDevelopmentEmulator=true;' ordersctl send bicep/deploy/sample-order.json",
	},
	run: send,
}

// sent is what send prints with --output json.
type sent struct {
	To        string `json:"to"`
	MessageID string `json:"messageId"`
	Subject   string `json:"subject"`
	Bytes     int    `json:"bytes"`
	DryRun    bool   `json:"dryRun"`
}

func send(ctx context.Context, c *cli, cmd *command, args []string) error {
	var qf queueFlags
	fs := flag.NewFlagSet(cmd.name, flag.ContinueOnError)
	qf.register(fs, c)
	qf.registerStream(fs)
	status := fs.Bool("status", false, "the file is an OrderStatusChanged body")
	dryRun := fs.Bool("dry-run", false, "print the message; send nothing")
	if err := qf.parse(cmd, fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usagef(cmd, "give one body file")
	}
	body, err := os.ReadFile(fs.Arg(0))
	if err != nil {
		return err
	}
	build := producer.OrderMessage
	if *status {
		build = producer.StatusMessage
	}
	msg, err := build(body)
	if err != nil {
		return fmt.Errorf("%s: %w", fs.Arg(0), err)
	}
	out := sent{To: "orders in " + qf.namespace, MessageID: *msg.MessageID, Subject: *msg.Subject, Bytes: len(body), DryRun: *dryRun}
	switch {
	case qf.connectionString != "":
		out.To = "orders in the Service Bus emulator"
	case qf.namespace == "":
		out.To = qf.stream
	}
	if !*dryRun {
		q, err := qf.open()
		if err != nil {
			return err
		}
		defer q.Close(context.WithoutCancel(ctx))
		snd, err := q.Sender()
		if err != nil {
			return err
		}
		sendCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		if err := snd.SendMessage(sendCtx, msg, nil); err != nil {
			return fmt.Errorf("send %s: %w", *msg.MessageID, err)
		}
	}
	if qf.output == "json" {
		return writeJSON(c.stdout, out)
	}
	verb := "sent to"
	if *dryRun {
		verb = "would send to"
	}
	_, err = fmt.Fprintf(c.stdout, "%s %s: MessageId %s, Subject %s, %d bytes\n", verb, out.To, out.MessageID, out.Subject, out.Bytes)
	return err
}
