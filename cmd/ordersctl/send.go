package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"

	"github.com/ordersink/orders-consumer/producer"
)

// openSender opens a sender to the orders queue in Azure; tests replace it.
var openSender = func(namespace string) (messageSender, func(context.Context), error) {
	client, err := newClient(namespace)
	if err != nil {
		return nil, nil, err
	}
	snd, err := client.NewSender("orders", nil)
	if err != nil {
		return nil, nil, err
	}
	return snd, func(ctx context.Context) { _ = client.Close(ctx) }, nil
}

// send is `send <file>`: the producer path (package producer) for tests and
// one-off fixes. In Azure it sends to orders; locally it appends the message
// to a stream file that `hostemu -stream FILE` delivers (testbed/orderstream
// Record format).
func send(ctx context.Context, args []string, getenv func(string) string, w io.Writer) error {
	fs := flag.NewFlagSet("send", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	ns := fs.String("namespace", getenv("SERVICEBUS_FULLY_QUALIFIED_NAMESPACE"), "Azure Service Bus namespace; empty: append to --stream")
	stream := fs.String("stream", ".local/hostemu/send.jsonl", "local stream file for hostemu -stream")
	status := fs.Bool("status", false, "the file is an OrderStatusChanged body (Subject OrderStatusChanged)")
	dryRun := fs.Bool("dry-run", false, "print the message; send nothing")
	if err := fs.Parse(args); err != nil {
		return usageErr(err)
	}
	if fs.NArg() != 1 {
		return fmt.Errorf("%w: send [--status] [--dry-run] [--namespace NS | --stream FILE] <file>", errUsage)
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
	target := "orders in " + *ns
	if *ns == "" {
		target = *stream
	}
	if *dryRun {
		fmt.Fprintf(w, "would send to %s: MessageId %s, Subject %s, %d bytes\n", target, *msg.MessageID, *msg.Subject, len(body))
		return nil
	}
	if *ns == "" {
		err = appendRecord(*stream, msg)
	} else {
		err = sendAzure(ctx, *ns, msg)
	}
	if err != nil {
		return fmt.Errorf("send %s: %w", *msg.MessageID, err)
	}
	fmt.Fprintf(w, "sent to %s: MessageId %s\n", target, *msg.MessageID)
	return nil
}

func sendAzure(ctx context.Context, ns string, msg *azservicebus.Message) error {
	snd, closeFn, err := openSender(ns)
	if err != nil {
		return err
	}
	defer closeFn(context.WithoutCancel(ctx))
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	return snd.SendMessage(ctx, msg, nil)
}

// appendRecord writes msg as one stream line: the body as text, so its bytes
// (and so its MessageId) survive exactly.
func appendRecord(path string, msg *azservicebus.Message) error {
	line, err := json.Marshal(struct {
		MessageID   string `json:"messageId"`
		ContentType string `json:"contentType"`
		Subject     string `json:"subject"`
		BodyText    string `json:"bodyText"`
	}{*msg.MessageID, *msg.ContentType, *msg.Subject, string(msg.Body)})
	if err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(append(line, '\n')); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
