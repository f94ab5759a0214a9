package orderstream

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/ordersink/orders-consumer/handler"
	"github.com/ordersink/orders-consumer/orders"
	"github.com/ordersink/orders-consumer/producer"
	"github.com/ordersink/orders-consumer/testbed/hostemu"
)

// WithFallbacks adds to a queue stream the messages of the submissions that
// fall back from the queue to the HTTP API (Submission.Fallback): the
// producer sent the order to the queue first (its answer lost, it cannot
// tell whether the message got there) and then posts the very same order.
// Each message goes in where the stream stands when its submission starts,
// a little before, so that either path may store the order first; the
// client's docs promise one order either way (docs/http-api.md, rule 1).
func WithFallbacks(msgs []*hostemu.Message, subs []Submission) []*hostemu.Message {
	out := msgs
	for _, s := range subs {
		if !s.Fallback {
			continue
		}
		// The queue's copy carries its own meta, which the fingerprint
		// leaves out: the same order, sent by two paths.
		body := strings.Replace(string(s.Body), `"producer":"web-shop"`, `"producer":"web-shop-queue"`, 1)
		m := &hostemu.Message{Body: []byte(body), MessageID: producer.MessageID(s.OrderID, []byte(body)),
			ContentType: "application/json", Subject: "OrderPlaced"}
		at := min(len(out), max(0, int(s.At*float64(len(out)))-5))
		out = append(out[:at:at], append([]*hostemu.Message{m}, out[at:]...)...)
	}
	return out
}

// edgeBody pads body's first line with an unknown member until the order's
// OrderAccepted event, as the Functions host sends it, is exactly at the
// event size budget for messages of maxMessageBytes (docs/contract.md §3,
// event size): one byte more and the order is refused. Its event's size
// does not depend on when it is accepted (acceptedAt has one width), so
// the first request and every retry are judged alike.
func edgeBody(body []byte, maxMessageBytes int) ([]byte, error) {
	fits := func(n int) ([]byte, bool, error) {
		b, err := padded(body, n)
		if err != nil {
			return nil, false, err
		}
		ok, err := eventFits(b, maxMessageBytes, epoch)
		return b, ok, err
	}
	lo, hi := 0, maxMessageBytes // fits(lo), not fits(hi)
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		_, ok, err := fits(mid)
		if err != nil {
			return nil, err
		}
		if ok {
			lo = mid
		} else {
			hi = mid
		}
	}
	b, ok, err := fits(lo)
	if err != nil || !ok {
		return nil, fmt.Errorf("no padding fits the event budget of %d bytes: %v", maxMessageBytes, err)
	}
	return b, nil
}

// eventFits says whether the OrderAccepted event of body, accepted at at,
// fits the event size budget of a message of maxMessageBytes as the host
// sends it.
func eventFits(body []byte, maxMessageBytes int, at time.Time) (bool, error) {
	o, err := orders.ParseOrder(body)
	if err != nil {
		return false, err
	}
	batch, err := o.AcceptanceDocuments(orders.Acceptance{MessageID: orders.MessageID(o.ID, body), AcceptedAt: at})
	if err != nil {
		return false, err
	}
	return handler.OutputBudget(maxMessageBytes)(batch.Event) == nil, nil
}

// padded is body with n bytes of padding in its first line, in strings
// below the contract's token limit (orders.MaxTokenBytes).
func padded(body []byte, n int) ([]byte, error) {
	var o map[string]any
	if err := json.Unmarshal(body, &o); err != nil {
		return nil, err
	}
	lines, _ := o["lines"].([]any)
	if len(lines) == 0 {
		return nil, fmt.Errorf("order without lines")
	}
	var pad []string
	for n > 0 {
		k := min(n, orders.MaxTokenBytes/2)
		pad, n = append(pad, strings.Repeat("x", k)), n-k
	}
	lines[0].(map[string]any)["pad"] = pad
	return json.Marshal(o)
}
