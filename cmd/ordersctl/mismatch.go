package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/ordersink/orders-consumer/orders"
)

// originalBody is the body of the message p parked, byte for byte: read
// from Cosmos DB when the envelope has only a bodyRef.
func (p Parked) originalBody(ctx context.Context, bodies *parkedBodies) ([]byte, error) {
	if p.Truncated {
		return nil, errors.New("the envelope holds only the start of the body")
	}
	body := []byte(p.Body)
	switch {
	case p.BodyRef != nil:
		var err error
		if body, err = bodies.read(ctx, p); err != nil {
			return nil, err
		}
	case p.BodyEncoding == "base64":
		var err error
		if body, err = base64.StdEncoding.DecodeString(p.Body); err != nil {
			return nil, fmt.Errorf("body is not base64: %w", err)
		}
	}
	// A body kept in Cosmos DB was checked as it was joined; one the
	// envelope carries is checked here, so what goes back to orders is the
	// producer's bytes (its MessageId and fingerprint with them) or nothing.
	if p.BodyRef == nil && p.BodySHA256 != "" {
		if got := orders.BodySHA256(body); got != p.BodySHA256 {
			return nil, fmt.Errorf("the envelope's body hashes to %s, not to its bodySha256 %s", got, p.BodySHA256)
		}
	}
	return body, nil
}

// maxDiffChanges bounds the changes a HashMismatch lists; the rest are
// counted. An operator decides on the first few; the body has them all.
const maxDiffChanges = 20

// mismatchDiff is what differs between a HashMismatch's body and the order
// stored under its orderId, docs being that order's partition.
func mismatchDiff(ctx context.Context, p Parked, bodies *parkedBodies, docs []json.RawMessage) (*orders.Diff, error) {
	var stored json.RawMessage
	for _, raw := range docs {
		var d struct{ Type string }
		if json.Unmarshal(raw, &d) == nil && d.Type == orders.TypeOrder {
			stored = raw
		}
	}
	if stored == nil {
		return nil, fmt.Errorf("no order %s is stored (deleted since it was parked?)", p.OrderID)
	}
	body, err := p.originalBody(ctx, bodies)
	if err != nil {
		return nil, err
	}
	return orders.DiffStored(stored, body, maxDiffChanges)
}

// addDiffs sets the Diff of each HashMismatch in ps; one that cannot be
// made is a warning on stderr, never a failure of the command that shows
// the message.
func addDiffs(ctx context.Context, c *cli, ps []Parked, bodies *parkedBodies) {
	for i := range ps {
		p := &ps[i]
		if p.Reason != string(orders.HashMismatch) || p.OrderID == "" {
			continue
		}
		if err := addDiff(ctx, p, bodies); err != nil {
			fmt.Fprintf(c.stderr, "warning: %s #%d: not compared with the stored order: %v\n", p.Queue, p.SequenceNumber, err)
		}
	}
}

func addDiff(ctx context.Context, p *Parked, bodies *parkedBodies) error {
	if err := bodies.open(); err != nil {
		return err
	}
	readCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	docs, err := bodies.store.PartitionDocuments(readCtx, p.OrderID)
	if err != nil {
		return fmt.Errorf("read order %s: %w", p.OrderID, err)
	}
	p.Diff, err = mismatchDiff(ctx, *p, bodies, docs)
	return err
}

// writeDiff prints d under a heading, one change a line.
func writeDiff(w io.Writer, indent string, d *orders.Diff) {
	fmt.Fprintf(w, "%schanges from the stored order (canonical form, meta left out):\n", indent)
	for _, ch := range d.Changes {
		fmt.Fprintf(w, "%s  %s\n", indent, ch)
	}
	if len(d.Changes) == 0 {
		fmt.Fprintf(w, "%s  none: the stored order now has this content\n", indent)
	}
	if d.More > 0 {
		fmt.Fprintf(w, "%s  … and %d more\n", indent, d.More)
	}
}
