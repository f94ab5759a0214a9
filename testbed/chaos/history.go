package chaos

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/ordersink/orders-consumer/testbed/history"
	"github.com/ordersink/orders-consumer/testbed/hostemu"
	"github.com/ordersink/orders-consumer/testbed/orderstream"
	"github.com/ordersink/orders-consumer/testbed/rig"
	"github.com/ordersink/orders-consumer/testbed/verify"
)

// HistoryTimeout bounds the check of one orderId's operations.
const HistoryTimeout = 10 * time.Second

// digest names a body in the history: equal bodies, equal digests.
func digest(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

// probe asks GetOrder for an order once as client, for the history check,
// on another instance than avoid (when set).
func (c *client) probe(ctx context.Context, client, orderID, avoid string) {
	ctx, cancel := context.WithTimeout(ctx, attemptTimeout)
	defer cancel()
	v := getOrder(ctx, c.http, c.base, c.keys[client], orderID, avoid)
	v.Client = client
	c.ledger.mu.Lock()
	c.ledger.probes = append(c.ledger.probes, v)
	c.ledger.mu.Unlock()
}

// historyOps are the ledger's requests as the history check takes them.
func (l *SubmitLedger) historyOps() []history.Op {
	l.mu.Lock()
	defer l.mu.Unlock()
	var ops []history.Op
	for _, a := range l.answers {
		in := history.Input{Kind: history.Submit, OrderID: a.OrderID, Client: a.Client, Key: a.Key, Hash: a.Hash,
			Label: fmt.Sprintf("copy %d attempt %d", a.Copy, a.Attempt)}
		out := history.Output{Unknown: !known(a.Status, a.ProblemType), Status: a.Status, Outcome: anchor(a.ProblemType),
			Body: digest([]byte(a.Body)), Replayed: a.Replayed}
		if a.Status/100 == 2 && isReceipt(a.Body) {
			out.Outcome = history.Receipt
		}
		ops = append(ops, history.Op{Input: in, Output: out, Call: a.Call, Return: a.Return})
	}
	for _, v := range slices.Concat(l.probes, l.views) {
		if v.Undone {
			continue
		}
		out := history.Output{Unknown: !known(v.Status, v.ProblemType), Status: v.Status, Body: v.Body}
		in := history.Input{Kind: history.Get, OrderID: v.OrderID, Client: v.Client}
		ops = append(ops, history.Op{Input: in, Output: out, Call: v.Call, Return: v.Return})
	}
	return ops
}

// known: an answer that says what happened. No answer, a 5xx and a 409
// other than order-id-taken (in progress, taken over) do not.
func known(status int, problem string) bool {
	switch {
	case status == 0, status >= 500:
		return false
	case status == http.StatusConflict:
		return anchor(problem) == history.OrderIDTaken
	}
	return true
}

func anchor(problem string) string {
	_, a, _ := strings.Cut(problem, "#")
	return a
}

// queueOps are the ProcessOrder deliveries of valid orders, with the
// outcome their answer's log line names (handler.humanLine: "<function>:
// <outcome> <orderId> …"). A failed invocation says nothing. Batches,
// whose lines are not one per delivery, are left out.
func queueOps(invs []*hostemu.Invocation) []history.Op {
	var ops []history.Op
	for _, inv := range invs {
		if inv.Request != nil || len(inv.Deliveries) != 1 {
			continue
		}
		c := orderstream.Classify(inv.Deliveries[0].Message)
		if given, ok := orderstream.Unwrap(inv.Deliveries[0].Message); ok {
			c = orderstream.Classify(given)
		}
		if !c.Valid {
			continue
		}
		out := history.Output{Unknown: !inv.OK()}
		if !out.Unknown && len(inv.Logs) > 0 {
			words := strings.Fields(inv.Logs[0])
			if len(words) > 1 {
				out.Outcome = words[1]
			}
			out.Unknown = out.Outcome != history.Created && out.Outcome != history.Duplicate && out.Outcome != history.Mismatch
		}
		in := history.Input{Kind: history.Deliver, OrderID: c.OrderID, Hash: c.Content,
			Label: fmt.Sprintf("%s#%d", inv.Deliveries[0].Message.MessageID, inv.Deliveries[0].DeliveryCount)}
		ops = append(ops, history.Op{Input: in, Output: out, Call: inv.Started, Return: inv.Started.Add(inv.Took)})
	}
	return ops
}

// publishOps are the OrderAccepted events sent to the topic, each at its
// send.
func publishOps(p *rig.PublisherResult) []history.Op {
	if p == nil {
		return nil
	}
	var ops []history.Op
	for _, m := range p.Topic {
		if m.EventType != "OrderAccepted" {
			continue
		}
		in := history.Input{Kind: history.Publish, OrderID: m.OrderID, Hash: m.RequestHash, Label: m.EventID}
		ops = append(ops, history.Op{Input: in, Call: m.Sent, Return: m.Sent})
	}
	return ops
}

// checkHistory checks the run's history (history.Check), drawing what
// fails into htmlPath.
func checkHistory(ev Evidence) (*verify.Check, history.Result) {
	ops := queueOps(ev.Invocations)
	if ev.HTTP != nil {
		ops = append(ops, ev.HTTP.historyOps()...)
	}
	ops = append(ops, publishOps(ev.Publisher)...)
	res := history.Check(ops, HistoryTimeout, ev.HistoryFile)
	c := &verify.Check{Name: "history: every answer, delivery outcome and event fits one sequential order of the contract's operations, per orderId (linearizable; porcupine)",
		Checked: res.Partitions}
	for _, id := range res.Illegal {
		c.Fail("order %s: no sequential order explains what its clients saw (%s)", id, orNone(res.Visualisation, res.VisualisationErr))
	}
	for _, id := range res.Undecided {
		c.Fail("order %s: not decided within %s", id, HistoryTimeout)
	}
	return c, res
}

func orNone(path string, err error) string {
	if err != nil {
		return "visualisation not written: " + err.Error()
	}
	if path == "" {
		return "no visualisation asked for"
	}
	return "see " + path
}
