package chaos

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/ordersink/orders-consumer/cosmos/cosmostest"
	"github.com/ordersink/orders-consumer/testbed/hostemu"
	"github.com/ordersink/orders-consumer/testbed/rig"
	"github.com/ordersink/orders-consumer/testbed/verify"
)

// Evidence is everything a run leaves to check: what every run leaves
// (verify.Evidence) and what its optional parts did.
type Evidence struct {
	verify.Evidence
	// HTTP, when set, is the run's HTTP traffic, checked with
	// SubmitLedger.Checks; KeyFaults, when set, the faults aimed at its key
	// completions.
	HTTP      *SubmitLedger
	KeyFaults *KeyFaults
	// Publisher, when set, is what the outbox publisher did
	// (PublisherResult.Checks).
	Publisher *rig.PublisherResult
	// Invocations are the queue's invocations; with the HTTP answers and
	// the topic they are the history checked for linearizability
	// (checkHistory), whose failing part is drawn into HistoryFile (HTML)
	// when set.
	Invocations []*hostemu.Invocation
	HistoryFile string
}

// readBack reads the run's documents by type, directly from Cosmos (not
// through the proxy).
func readBack(ctx context.Context, db *cosmostest.Database, only map[string]bool) (map[string][]json.RawMessage, error) {
	docs := map[string][]json.RawMessage{}
	for _, t := range []string{"order", "outboxEvent", "conflict"} {
		d, err := db.Documents(ctx, t)
		if err != nil {
			return nil, fmt.Errorf("read back %s documents: %w", t, err)
		}
		if only != nil {
			d = slices.DeleteFunc(d, func(doc json.RawMessage) bool {
				var head verify.DocHead
				return json.Unmarshal(doc, &head) != nil || !only[head.OrderID]
			})
		}
		docs[t] = d
	}
	return docs, nil
}

// CheckRun reads a run's documents back from db (directly, not through
// the proxy) and checks every invariant against them: the one set of rules
// make run and make chaos both print. It returns the findings and the
// orders stored for the queue's orderIds (not those submitted over HTTP),
// for Count.
func CheckRun(ctx context.Context, db *cosmostest.Database, ev Evidence) (*verify.Findings, []StoredOrder, error) {
	docs, err := readBack(ctx, db, ev.OnlyOrders)
	if err != nil {
		return nil, nil, err
	}
	if ev.Publisher != nil {
		docs["outboxEvent"] = ev.Publisher.WithoutPoison(docs["outboxEvent"])
	}
	// The publisher's checks cover every order, the queue's and the HTTP
	// API's alike.
	all := docs
	var api map[string][]json.RawMessage
	if ev.HTTP != nil {
		// Orders submitted over HTTP never pass through the queue: the
		// HTTP checks cover their documents.
		docs, api = ev.HTTP.takeDocuments(docs)
	}
	stored, err := storedOrders(docs["order"])
	if err != nil {
		return nil, nil, err
	}
	f := verify.CheckRun(docs, ev.Evidence)
	if ev.Publisher != nil {
		f.Checks = append(f.Checks, ev.Publisher.Checks(all)...)
	}
	if ev.HTTP != nil {
		f.Checks = append(f.Checks, ev.HTTP.Checks(api)...)
	}
	if ev.KeyFaults != nil && ev.HTTP != nil {
		f.Checks = append(f.Checks, ev.KeyFaults.Checks(ev.HTTP.Answers())...)
	}
	c, res := checkHistory(ev)
	f.Checks, f.History = append(f.Checks, c), &res
	return f, stored, nil
}
