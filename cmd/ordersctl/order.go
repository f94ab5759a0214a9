package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/ordersink/orders-consumer/cosmos"
)

// orderShow prints everything the store holds in an order's partition (the
// order with its fingerprint, conflict records, status, outbox events) and
// any parked message for it. Cosmos is reached as the handler reaches it:
// COSMOS_ENDPOINT, COSMOS_DATABASE, COSMOS_CONTAINER, and Microsoft Entra ID
// unless COSMOS_KEY is set (local emulators only).
func orderShow(ctx context.Context, args []string, getenv func(string) string, w io.Writer) error {
	fs := flag.NewFlagSet("order show", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	dir := fs.String("local", ".local/hostemu", "folder of the local host emulator's files, for parked messages")
	output := fs.String("output", "table", "table or json")
	if err := fs.Parse(args); err != nil {
		return usageErr(err)
	}
	if fs.NArg() != 1 || (*output != "table" && *output != "json") {
		return fmt.Errorf("%w: order show [--output table|json] <orderId>", errUsage)
	}
	orderID := fs.Arg(0)
	endpoint := getenv("COSMOS_ENDPOINT")
	if endpoint == "" {
		return fmt.Errorf("%w: set COSMOS_ENDPOINT (and COSMOS_DATABASE, COSMOS_CONTAINER)", errUsage)
	}
	store, err := cosmos.Open(cosmos.Options{Endpoint: endpoint, Key: getenv("COSMOS_KEY")},
		orDefault(getenv("COSMOS_DATABASE"), "shop"), orDefault(getenv("COSMOS_CONTAINER"), "orders"))
	if err != nil {
		return err
	}
	// Below the SDK's own retries of a cold start, so a wrong endpoint fails
	// in seconds instead of hanging the operator's shell.
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	docs, err := store.PartitionDocuments(ctx, orderID)
	if err != nil {
		return fmt.Errorf("read order %s: %w", orderID, err)
	}
	all, err := readLocal(*dir)
	if err != nil {
		return err
	}
	parked := []Parked{}
	for _, p := range all {
		if p.OrderID == orderID {
			parked = append(parked, p)
		}
	}
	if len(docs) == 0 && len(parked) == 0 {
		return &notFoundError{what: "order " + orderID}
	}
	if *output == "json" {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			Documents []json.RawMessage `json:"documents"`
			Parked    []Parked          `json:"parked"`
		}{docs, parked})
	}
	return orderTable(w, docs, parked)
}

func orderTable(w io.Writer, docs []json.RawMessage, parked []Parked) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TYPE\tID\tHASH / STATUS\tMESSAGE ID\tAT")
	for _, raw := range docs {
		var d struct {
			Type, ID, RequestHash, IncomingHash, Status, MessageID string
			AcceptedAt, DetectedAt, UpdatedAt                      string
		}
		if err := json.Unmarshal(raw, &d); err != nil {
			return fmt.Errorf("stored document is not JSON: %w", err)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", d.Type, d.ID, first(d.RequestHash, d.IncomingHash, d.Status),
			d.MessageID, first(d.AcceptedAt, d.DetectedAt, d.UpdatedAt))
	}
	for _, p := range parked {
		fmt.Fprintf(tw, "parked (%s)\t%s\t%s\t%s\t%s\n", p.Queue, p.OrderID, p.Reason, p.MessageID, p.ParkedAt)
	}
	return tw.Flush()
}

func first(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}

func orDefault(v, d string) string { return first(v, d) }
