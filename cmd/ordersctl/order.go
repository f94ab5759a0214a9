package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/ordersink/orders-consumer/cosmos"
)

// errNoCosmos says where Cosmos DB is configured.
var errNoCosmos = errors.New("COSMOS_ENDPOINT is not set (and COSMOS_DATABASE, COSMOS_CONTAINER; COSMOS_KEY for a local emulator)")

// openStore reaches Cosmos DB as the handler does: COSMOS_ENDPOINT,
// COSMOS_DATABASE, COSMOS_CONTAINER, and Microsoft Entra ID unless
// COSMOS_KEY is set (local emulators only).
func openStore(getenv func(string) string) (*cosmos.Store, error) {
	endpoint := getenv("COSMOS_ENDPOINT")
	if endpoint == "" {
		return nil, errNoCosmos
	}
	return cosmos.Open(cosmos.Options{Endpoint: endpoint, Key: getenv("COSMOS_KEY")},
		orDefault(getenv("COSMOS_DATABASE"), "shop"), orDefault(getenv("COSMOS_CONTAINER"), "orders"))
}

var orderShowCmd = &command{
	name:     "order show",
	synopsis: "[--namespace NS | --connection-string CS | --local DIR] [--output table|json] <orderId>",
	about: `Shows every document Cosmos DB holds in the order's partition (the order with its requestHash,
conflict records, status, outbox events, parked bodies) and every parked or dead-lettered
message for it; for a HashMismatch, what differs from the stored order (as parked show). Cosmos DB: COSMOS_ENDPOINT, COSMOS_DATABASE (shop), COSMOS_CONTAINER (orders),
Microsoft Entra ID, or COSMOS_KEY for the local emulator (make run's database is named in its
summary; keep it with bin/localrun -keep-database).`,
	examples: []string{
		"ordersctl order show --output json ORD-2026-000123 | jq '.documents[] | select(.type == \"conflict\")'",
		"COSMOS_ENDPOINT=https://acct.documents.azure.com:443/ ordersctl order show --namespace \"$NS\" ORD-2026-000123",
	},
	run: orderShow,
}

func orderShow(ctx context.Context, c *cli, cmd *command, args []string) error {
	var qf queueFlags
	fs := flag.NewFlagSet(cmd.name, flag.ContinueOnError)
	qf.register(fs, c)
	if err := qf.parse(cmd, fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usagef(cmd, "give one orderId")
	}
	orderID := fs.Arg(0)
	store, err := openStore(c.getenv)
	if errors.Is(err, errNoCosmos) {
		return usagef(cmd, "%v", err)
	}
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
	all, err := list(ctx, c, &qf)
	if err != nil {
		return err
	}
	parked := (&filter{order: orderID}).selectFrom(all)
	if parked == nil {
		parked = []Parked{}
	}
	if len(docs) == 0 && len(parked) == 0 {
		return &notFoundError{what: "order " + orderID}
	}
	addDiffs(ctx, c, parked, &parkedBodies{getenv: c.getenv, store: store})
	if qf.output == "json" {
		return writeJSON(c.stdout, struct {
			Documents []json.RawMessage `json:"documents"`
			Parked    []Parked          `json:"parked"`
		}{docs, parked})
	}
	return orderTable(c.stdout, docs, parked)
}

func orderTable(w io.Writer, docs []json.RawMessage, parked []Parked) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TYPE\tID\tHASH / STATUS\tMESSAGE ID\tAT")
	for _, raw := range docs {
		var d struct {
			Type, ID, RequestHash, IncomingHash, Status, MessageID string
			AcceptedAt, DetectedAt, UpdatedAt, ParkedAt            string
		}
		if err := json.Unmarshal(raw, &d); err != nil {
			return fmt.Errorf("stored document is not JSON: %w", err)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", d.Type, d.ID, first(d.RequestHash, d.IncomingHash, d.Status),
			d.MessageID, first(d.AcceptedAt, d.DetectedAt, d.UpdatedAt, d.ParkedAt))
	}
	for _, p := range parked {
		fmt.Fprintf(tw, "parked (%s #%d)\t%s\t%s\t%s\t%s\n", p.Queue, p.SequenceNumber, p.OrderID, p.Reason, p.MessageID, p.ParkedAt)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, p := range parked {
		if p.Diff != nil {
			fmt.Fprintf(w, "\nparked (%s #%d) %s, ", p.Queue, p.SequenceNumber, p.Reason)
			writeDiff(w, "", p.Diff)
		}
	}
	return nil
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
