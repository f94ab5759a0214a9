package localrun

import (
	"context"
	"fmt"
	"slices"

	"github.com/ordersink/orders-consumer/orders"
	"github.com/ordersink/orders-consumer/testbed/chaos"
	"github.com/ordersink/orders-consumer/testbed/hostemu"
	"github.com/ordersink/orders-consumer/testbed/orderstream"
	"github.com/ordersink/orders-consumer/testbed/rig"
	"github.com/ordersink/orders-consumer/testbed/verify"
)

// verifyRun runs the invariant checks of make chaos over this run (the
// documents read back, the fates of the messages, the broker's and the
// handler's counts, the proxy's ledger when the run had one, the HTTP
// answers), filling rep's HTTP figures, findings and contents. A resumed run
// counts and checks only its own orders.
func verifyRun(ctx context.Context, opts Options, rep *chaos.Report, ss *session, w *watched, res *rig.Result, submits *chaos.SubmitLedger) error {
	msgs := append(delivered(opts.Messages, res.Dropped), w.tracker.Added()...)
	for _, inv := range w.invs {
		w.tracker.Observe(inv)
	}
	ev := chaos.Evidence{Evidence: verify.Evidence{Messages: msgs, Fates: w.tracker, Queue: res.Queue, Worker: res.Worker, Dead: res.DeadLetters,
		Outages: res.Outages, RecoveryBound: verify.DefaultRecoveryBound}, Publisher: res.Publisher, Invocations: w.invs, HistoryFile: opts.HistoryFile}
	if opts.Resume {
		ev.OnlyOrders = orderIDs(msgs)
	}
	if res.Ledger != nil {
		ev.Created, ev.CreatedAt = res.Ledger.Created(), res.Ledger.CreatedAt()
	}
	if len(opts.Submissions) > 0 {
		rep.HTTP, ev.HTTP = &chaos.HTTPFigures{Answers: submits.Counts()}, submits
		if opts.SubmitInjected != nil {
			rep.HTTP.Injected = *opts.SubmitInjected
		}
		rep.HTTP.TookOver, rep.HTTP.Fenced = w.outcomes.KeyTakeovers()
	}
	rep.Orders = orderstream.DistinctOrders(msgs)
	findings, stored, err := chaos.CheckRun(ctx, ss.db.docs, ev)
	if err != nil {
		return fmt.Errorf("read the run's documents back: %w", err)
	}
	rep.Findings = findings
	rep.Summary = w.tracker.Summary()
	rep.Contents = chaos.Count(msgs, w.invs, stored, len(res.DeadLetters), chaos.ParkingQueue(ss.fns[0]))
	return nil
}

// delivered is the messages the queue accepted: those duplicate detection
// dropped never reach the consumer, so they are not the consumer's to store
// or park.
func delivered(msgs, dropped []*hostemu.Message) []*hostemu.Message {
	gone := make(map[*hostemu.Message]bool, len(dropped))
	for _, m := range dropped {
		gone[m] = true
	}
	return slices.DeleteFunc(slices.Clone(msgs), func(m *hostemu.Message) bool { return gone[m] })
}

// orderIDs are the orderIds the messages name; a resumed run checks only
// their documents, not those of the run it continues.
func orderIDs(msgs []*hostemu.Message) map[string]bool {
	ids := map[string]bool{}
	for _, m := range msgs {
		if id := orders.PeekOrderID(m.Body); id != "" {
			ids[id] = true
		}
	}
	return ids
}
