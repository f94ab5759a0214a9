package localrun

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/ordersink/orders-consumer/testbed/chaos"
	"github.com/ordersink/orders-consumer/testbed/faults"
	"github.com/ordersink/orders-consumer/testbed/hostemu"
	"github.com/ordersink/orders-consumer/testbed/rig"
	"github.com/ordersink/orders-consumer/testbed/verify"
)

// DefaultOutages is the outage of make run's default stream: Cosmos
// unreachable for 30 s once a quarter of the messages are settled.
var DefaultOutages = []faults.Outage{{Kind: faults.Unreachable, After: 0.25, For: 30 * time.Second}}

// checkRun runs the invariant checks of make chaos over this run: the
// documents read back, the fates of the messages (a verify.Tracker fed this
// run's invocations), the broker's and the handler's counts, and the proxy's
// ledger when the run had one (outages). only, when not nil, limits the
// documents read back to those orderIds (a resumed run). It returns the
// findings and the queue's stored orders (chaos.CheckRun).
func checkRun(ctx context.Context, db *ordersDB, t *verify.Tracker, msgs []*hostemu.Message, invs []*hostemu.Invocation, res *rig.Result, only map[string]bool, http *chaos.SubmitLedger, historyFile string) (*verify.Findings, []chaos.StoredOrder, error) {
	for _, inv := range invs {
		t.Observe(inv)
	}
	ev := chaos.Evidence{Evidence: verify.Evidence{Messages: msgs, Fates: t, Queue: res.Queue, Worker: res.Worker, Dead: res.DeadLetters,
		Outages: res.Outages, RecoveryBound: verify.DefaultRecoveryBound, OnlyOrders: only}, HTTP: http, Publisher: res.Publisher, Invocations: invs, HistoryFile: historyFile}
	if res.Ledger != nil {
		ev.Created, ev.CreatedAt = res.Ledger.Created(), res.Ledger.CreatedAt()
	}
	f, stored, err := chaos.CheckRun(ctx, db.docs, ev)
	if err != nil {
		return nil, nil, fmt.Errorf("read the run's documents back: %w", err)
	}
	return f, stored, nil
}

// orderIDs are the orderIds the messages name; a resumed run checks only
// their documents, not those of the run it continues.
func orderIDs(msgs []*hostemu.Message) map[string]bool {
	ids := map[string]bool{}
	for _, m := range msgs {
		var head struct {
			OrderID string `json:"orderId"`
		}
		if json.Unmarshal(m.Body, &head) == nil && head.OrderID != "" {
			ids[head.OrderID] = true
		}
	}
	return ids
}
