package handler

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/ordersink/orders-consumer/orders"
)

// RequeueBinding is ProcessOrderBatch's output to the orders queue, through
// which a batch that must be completed requeues its young transient
// messages instead of parking them (docs/adr/0007-holding-through-outages.md).
const RequeueBinding = "requeue"

// requeued is the outcome of a transient message of a batch that had to be
// completed: it was requeued: sent to the queue as a new message, with its
// deliveries counted. Only ProcessOrderBatch decides it, so the outcome
// lives here rather than among the domain's.
const requeued orders.Outcome = "requeued"

// requeueKey names the one member of a requeued message's body.
const requeueKey = "orderConsumerRequeued"

// Requeued is a message a batch requeues to the orders queue. The
// original body travels as a string, so the host's re-serialisation of
// output objects (indentation, dates, numbers) cannot change a byte of it,
// nor its fingerprint; the Subject and the deliveries so far travel with it,
// because an output message can carry neither.
type Requeued struct {
	Body         string `json:"body"`
	BodyEncoding string `json:"bodyEncoding,omitempty"`
	MessageID    string `json:"messageId"`
	Subject      string `json:"subject,omitempty"`
	// Deliveries counts the deliveries of the message so far, earlier
	// requeues included: the retry budget carries over.
	Deliveries   int    `json:"deliveries"`
	EnqueuedAt   string `json:"enqueuedTimeUtc,omitempty"`
	InvocationID string `json:"invocationId"`
	Reason       string `json:"reason"`
}

// requeue returns the output message that gives d back to the queue, or an
// error when it would not fit in one message as the host sends it (fits, the
// budget every output passes). One that does not fit is parked as
// RetryBudgetExhausted instead.
func (d delivery) requeue(reason string, fits func(any) error) (map[string]Requeued, error) {
	q := Requeued{Body: string(d.body), MessageID: d.messageID, Subject: d.subject, Deliveries: d.deliveryCount,
		EnqueuedAt: d.enqueuedAt, InvocationID: d.invocationID, Reason: reason}
	if !utf8.Valid(d.body) {
		q.Body, q.BodyEncoding = base64.StdEncoding.EncodeToString(d.body), "base64"
	}
	out := map[string]Requeued{requeueKey: q}
	if err := fits(out); err != nil {
		return nil, fmt.Errorf("requeued it would be %w", err)
	}
	return out, nil
}

// UnwrapRequeued returns the requeue a message's body holds and the
// original body it carries (docs/contract.md §7); ok is false for any other
// body: one that is not an object of the one member orderConsumerRequeued,
// or whose base64 body does not decode. The test bench reads requeued
// messages with it, as the consumer does.
func UnwrapRequeued(body []byte) (q Requeued, original []byte, ok bool) {
	if !bytes.Contains(body, []byte(`"`+requeueKey+`"`)) {
		return Requeued{}, nil, false
	}
	var v map[string]*Requeued
	if json.Unmarshal(body, &v) != nil || len(v) != 1 || v[requeueKey] == nil {
		return Requeued{}, nil, false
	}
	q = *v[requeueKey]
	original = []byte(q.Body)
	if q.BodyEncoding == "base64" {
		b, err := base64.StdEncoding.DecodeString(q.Body)
		if err != nil {
			return Requeued{}, nil, false
		}
		original = b
	}
	return q, original, true
}

// unwrapRequeued turns a requeued message back into the message it gives
// back: its body, MessageId and Subject, and its deliveries added to this
// one's.
func (d *delivery) unwrapRequeued() {
	q, body, ok := UnwrapRequeued(d.body)
	if !ok {
		return
	}
	d.body, d.messageID, d.subject, d.metadataCopied = body, q.MessageID, q.Subject, false
	d.priorDeliveries = max(q.Deliveries, 0)
	d.deliveryCount += d.priorDeliveries
	if t, err := time.Parse(time.RFC3339Nano, q.EnqueuedAt); err == nil {
		d.enqueuedAt = t.UTC().Format(time.RFC3339Nano)
	}
}

// settle completes a batch that holds a message on its last delivery with a
// final outcome: answering 503 would drop that message's envelope (the host
// ignores Outputs on a failed invocation) and the broker would dead-letter it
// without a reason. Its transient batch-mates on their last delivery are
// parked (the processor made them Exhausted); the younger ones are given
// back to the queue, so that no good order is parked because of its
// neighbour. It returns the requeue outputs.
func (cfg Config) settle(ds []delivery, results []batchResult) []map[string]Requeued {
	forcedBy := -1
	for i, r := range results {
		if r.res.Outcome.Parks() && cfg.Processor.LastAttempt(ds[i].deliveryCount) {
			forcedBy = i
			break
		}
	}
	if forcedBy < 0 {
		return nil
	}
	var out []map[string]Requeued
	for i := range results {
		r := &results[i].res
		if r.Outcome != orders.Transient {
			continue
		}
		why := fmt.Sprintf("message %s was on its last delivery, and a batch settles as a whole", ds[forcedBy].messageID)
		q, err := ds[i].requeue(why, cfg.fitOutput)
		if err != nil {
			r.Outcome, r.Reason = orders.Exhausted, orders.RetryBudgetExhausted
			r.Description = fmt.Sprintf("parked with its batch at delivery %d: %s, and it cannot be requeued (%v); still failing: %s",
				ds[i].deliveryCount, why, err, r.Description)
			continue
		}
		r.Outcome = requeued
		r.Description = fmt.Sprintf("requeued as a new message: %s; was failing: %s", why, r.Description)
		out = append(out, q)
	}
	return out
}
