package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
)

// Parked is one parked or dead-lettered message, as the table and the JSON
// output show it.
type Parked struct {
	Queue         string `json:"queue"` // "parking" or "deadletter"
	OrderID       string `json:"orderId,omitempty"`
	MessageID     string `json:"messageId"`
	Reason        string `json:"reason"`
	DeliveryCount int    `json:"deliveryCount"`
	ParkedAt      string `json:"parkedAt,omitempty"`
	Description   string `json:"description"`
	Body          string `json:"body,omitempty"`
}

type listFlags struct {
	dir, namespace, parkingQueue, reason, order, output string
}

func parseFlags(name string, args []string, getenv func(string) string, withFilters bool) (listFlags, []string, error) {
	var f listFlags
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&f.dir, "local", ".local/hostemu", "folder of the local host emulator's files")
	fs.StringVar(&f.namespace, "namespace", getenv("SERVICEBUS_FULLY_QUALIFIED_NAMESPACE"), "Azure Service Bus namespace; empty: local files")
	fs.StringVar(&f.parkingQueue, "parking-queue", "orders-deadletter", "the parking queue (Azure)")
	fs.StringVar(&f.output, "output", "table", "table or json")
	if withFilters {
		fs.StringVar(&f.reason, "reason", "", "only this parking or dead-letter reason")
		fs.StringVar(&f.order, "order", "", "only this orderId")
	}
	if err := fs.Parse(args); err != nil {
		return f, nil, usageErr(err)
	}
	if f.output != "table" && f.output != "json" {
		return f, nil, fmt.Errorf("%w: --output %q: want table or json", errUsage, f.output)
	}
	return f, fs.Args(), nil
}

// openAzure opens the Azure queues; tests replace it with fakes.
var openAzure = azureQueues

// load reads the parked and dead-lettered messages: from Azure Service Bus
// when a namespace is given, else from the local host emulator's files.
func load(ctx context.Context, f listFlags) ([]Parked, error) {
	if f.namespace == "" {
		return readLocal(f.dir)
	}
	parking, dl, closeFn, err := openAzure(f.namespace, f.parkingQueue)
	if err != nil {
		return nil, err
	}
	defer closeFn(context.WithoutCancel(ctx))
	return readAzure(ctx, parking, dl)
}

func parkedList(ctx context.Context, args []string, getenv func(string) string, w io.Writer) error {
	f, rest, err := parseFlags("parked list", args, getenv, true)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return fmt.Errorf("%w: unexpected argument %q", errUsage, rest[0])
	}
	all, err := load(ctx, f)
	if err != nil {
		return err
	}
	var out []Parked
	for _, p := range all {
		if (f.reason == "" || p.Reason == f.reason) && (f.order == "" || p.OrderID == f.order) {
			out = append(out, p)
		}
	}
	return write(w, f.output, out)
}

func parkedShow(ctx context.Context, args []string, getenv func(string) string, w io.Writer) error {
	f, rest, err := parseFlags("parked show", args, getenv, false)
	if err != nil {
		return err
	}
	if len(rest) != 1 {
		return fmt.Errorf("%w: parked show takes one orderId or messageId", errUsage)
	}
	all, err := load(ctx, f)
	if err != nil {
		return err
	}
	var out []Parked
	for _, p := range all {
		if p.OrderID == rest[0] || p.MessageID == rest[0] {
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		return &notFoundError{what: rest[0]}
	}
	if f.output == "json" {
		return write(w, "json", out)
	}
	for _, p := range out {
		fmt.Fprintf(w, "queue:          %s\norderId:        %s\nmessageId:      %s\nreason:         %s\ndeliveries:     %d\nparked at:      %s\ndescription:    %s\nbody:           %s\n\n",
			p.Queue, p.OrderID, p.MessageID, p.Reason, p.DeliveryCount, p.ParkedAt, p.Description, p.Body)
	}
	return nil
}

func write(w io.Writer, output string, ps []Parked) error {
	if output == "json" {
		if ps == nil {
			ps = []Parked{}
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(ps)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "QUEUE\tORDER ID\tMESSAGE ID\tREASON\tDELIVERIES\tPARKED AT\tDESCRIPTION")
	for _, p := range ps {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%s\n", p.Queue, p.OrderID, p.MessageID, p.Reason, p.DeliveryCount, p.ParkedAt, oneLine(p.Description, 80))
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

// readLocal reads the parking queue's and the broker dead-letter queue's
// files; a file that does not exist is an empty queue.
func readLocal(dir string) ([]Parked, error) {
	var out []Parked
	err := eachLine(filepath.Join(dir, "orders-deadletter.jsonl"), func(line []byte) error {
		var sent struct{ Body string }
		if err := json.Unmarshal(line, &sent); err != nil {
			return err
		}
		p, err := fromEnvelope([]byte(sent.Body))
		if err != nil {
			return err
		}
		out = append(out, p)
		return nil
	})
	if err != nil {
		return nil, err
	}
	err = eachLine(filepath.Join(dir, "orders.deadletter.jsonl"), func(line []byte) error {
		var d struct {
			MessageID     string `json:"messageId"`
			DeliveryCount int    `json:"deliveryCount"`
			Reason        string `json:"deadLetterReason"`
			Description   string `json:"deadLetterErrorDescription"`
			Body          string `json:"body"`
		}
		if err := json.Unmarshal(line, &d); err != nil {
			return err
		}
		out = append(out, fromDeadLetter(d.MessageID, d.DeliveryCount, d.Reason, d.Description, d.Body))
		return nil
	})
	return out, err
}

// fromEnvelope reads a parking envelope (contract §6).
func fromEnvelope(b []byte) (Parked, error) {
	var e struct {
		Reason, Description, OrderID, MessageID, ParkedAt, Body string
		DeliveryCount                                           int
	}
	if err := json.Unmarshal(b, &e); err != nil {
		return Parked{}, fmt.Errorf("parking envelope: %w", err)
	}
	return Parked{Queue: "parking", OrderID: e.OrderID, MessageID: e.MessageID, Reason: e.Reason,
		DeliveryCount: e.DeliveryCount, ParkedAt: e.ParkedAt, Description: e.Description, Body: e.Body}, nil
}

// fromDeadLetter describes a message the broker dead-lettered; its body is
// the original message, whose orderId is read when it has one.
func fromDeadLetter(messageID string, deliveries int, reason, description, body string) Parked {
	var head struct {
		OrderID string `json:"orderId"`
	}
	_ = json.Unmarshal([]byte(body), &head) // a body that is not an order has no orderId
	return Parked{Queue: "deadletter", OrderID: head.OrderID, MessageID: messageID, Reason: reason,
		DeliveryCount: deliveries, Description: description, Body: body}
}

func eachLine(path string, f func([]byte) error) error {
	file, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer file.Close()
	sc := bufio.NewScanner(file)
	sc.Buffer(make([]byte, 64*1024), 8<<20) // an envelope holds a body of up to 256 KB, escaped
	for n := 1; sc.Scan(); n++ {
		if err := f(sc.Bytes()); err != nil {
			return fmt.Errorf("%s line %d: %w", path, n, err)
		}
	}
	return sc.Err()
}
