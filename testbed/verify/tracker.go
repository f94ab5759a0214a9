package verify

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"strings"
	"sync"

	"github.com/ordersink/orders-consumer/idempotency"
	"github.com/ordersink/orders-consumer/orders"
	"github.com/ordersink/orders-consumer/testbed/hostemu"
	"github.com/ordersink/orders-consumer/testbed/orderstream"
)

// fate is what happened to one message across its deliveries.
type fate struct {
	deliveries int
	// spans are when its deliveries' invocations ran.
	spans []Span
	// final is Completed or DeadLettered once the broker is done with the
	// message; finalParked is the envelope of the delivery it completed
	// with, if that one parked.
	final       hostemu.Settlement
	finalParked *orderstream.Envelope
	// parked are all envelopes its deliveries wrote, completion lost or not.
	parked []orderstream.Envelope
	// lastFailure is why its last failed delivery failed.
	lastFailure string
}

// Failure causes of an invocation, as the host saw them.
const (
	causeTransient = "handler answered non-2xx (transient)"
	causeNoAnswer  = "no answer (handler killed or unreachable)"
	causeOther     = "other"
)

// Tracker follows every message of a workload through the host emulator.
type Tracker struct {
	mu          sync.Mutex
	byMsg       map[*hostemu.Message]*fate
	invocations int
	// settlements counts deliveries by settlement; failures failed
	// invocations by cause.
	settlements map[hostemu.Settlement]int
	failures    map[string]int
	// badEnvelopes are parking outputs that are no envelope.
	badEnvelopes []string
	// given maps a message an output binding put on the queue to the
	// message it stands for (Enqueued); added lists those in order.
	given map[*hostemu.Message]*hostemu.Message
	added []*hostemu.Message
}

// NewTracker follows msgs.
func NewTracker(msgs []*hostemu.Message) *Tracker {
	t := &Tracker{byMsg: map[*hostemu.Message]*fate{}, settlements: map[hostemu.Settlement]int{},
		failures: map[string]int{}, given: map[*hostemu.Message]*hostemu.Message{}}
	for _, m := range msgs {
		t.byMsg[m] = &fate{}
	}
	return t
}

// Enqueued follows a message an output binding put on the queue (pass it
// as hostemu.Options.Enqueued): an enqueued message (SubmitOrder's order, a
// batch's requeue) is followed as the message it stands for, which is what
// the consumer reads and what the checks read.
func (t *Tracker) Enqueued(_ *hostemu.Invocation, m *hostemu.Message) {
	logical, ok := orderstream.Unwrap(m)
	if !ok {
		logical = m
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.given[m] = logical
	t.byMsg[logical] = &fate{}
	t.added = append(t.added, logical)
}

// Added returns the messages output bindings put on the queue, as the
// messages they stand for, in the order they were sent.
func (t *Tracker) Added() []*hostemu.Message {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]*hostemu.Message(nil), t.added...)
}

// Observe books one finished invocation; pass it as hostemu.Options.Observe.
func (t *Tracker) Observe(inv *hostemu.Invocation) {
	var envs []orderstream.Envelope
	for _, out := range inv.Outputs {
		if out.Binding != "parking" {
			continue
		}
		p, err := orderstream.ParseEnvelope(out.Text)
		if err != nil {
			t.mu.Lock()
			t.badEnvelopes = append(t.badEnvelopes, fmt.Sprintf("%s invocation %s parked a message that is not an envelope: %v", inv.Function, inv.ID, err))
			t.mu.Unlock()
			continue
		}
		envs = append(envs, *p)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.invocations++
	if !inv.OK() {
		t.failures[failureCause(inv)]++
	}
	for i, d := range inv.Deliveries {
		if logical, ok := t.given[d.Message]; ok {
			d.Message = logical
		}
		f := t.byMsg[d.Message]
		if f == nil {
			continue
		}
		f.deliveries++
		f.spans = append(f.spans, Span{inv.Started, inv.Started.Add(inv.Took)})
		s := inv.Settlements[i]
		t.settlements[s]++
		env := envelopeOf(d, len(inv.Deliveries), envs)
		if env != nil {
			f.parked = append(f.parked, *env)
		}
		switch s {
		case hostemu.Completed:
			f.final, f.finalParked = s, env
		case hostemu.DeadLettered:
			f.final, f.lastFailure = s, inv.Failure
		case hostemu.Abandoned:
			f.lastFailure = inv.Failure
		}
	}
}

// envelopeOf takes the envelope that parked delivery d out of envs: in a
// single-message invocation the one envelope; in a batch the first left with
// d's content (envelopes carry the body, and copies of one content in a
// batch are parked alike).
func envelopeOf(d hostemu.Delivery, deliveries int, envs []orderstream.Envelope) *orderstream.Envelope {
	for i := range envs {
		e := &envs[i]
		if e.Reason == "" {
			continue // taken
		}
		if deliveries == 1 || orderstream.ContentKey(e.RawBody) == orderstream.ContentKey(d.Message.Body) ||
			len(e.RawBody) == 0 && e.BodySHA256 == orders.BodySHA256(d.Message.Body) {
			taken := *e
			e.Reason = ""
			return &taken
		}
	}
	return nil
}

func failureCause(inv *hostemu.Invocation) string {
	switch {
	case inv.Status >= 300:
		return causeTransient
	case inv.Status == 0 && strings.HasPrefix(inv.Failure, "no answer"):
		return causeNoAnswer
	case inv.Status == 0 && strings.HasPrefix(inv.Failure, "the handler is not available"):
		return causeNoAnswer
	}
	return causeOther
}

func (t *Tracker) invocationCount() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.invocations
}

func (t *Tracker) fateOf(m *hostemu.Message) *fate {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.byMsg[m]
}

// OutcomeLog reads the handler's JSON log lines (one "invocation" line per
// message, contract outcome and parking reason) as the handler writes them.
type OutcomeLog struct {
	tee io.Writer

	mu       sync.Mutex
	partial  []byte
	outcomes map[string]int // outcome -> invocations
	// tookOver and fenced count the HTTP requests that took a stale key
	// over, and those whose key another attempt had taken over (their
	// completion or release refused by the ETag, docs/contract.md §13).
	tookOver, fenced int
}

// NewOutcomeLog returns a writer for the handler's output that also copies
// it to tee (nil: nowhere).
func NewOutcomeLog(tee io.Writer) *OutcomeLog {
	if tee == nil {
		tee = io.Discard
	}
	return &OutcomeLog{tee: tee, outcomes: map[string]int{}}
}

func (l *OutcomeLog) Write(p []byte) (int, error) {
	_, _ = l.tee.Write(p)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.partial = append(l.partial, p...)
	for {
		text, rest, ok := bytes.Cut(l.partial, []byte("\n"))
		if !ok {
			return len(p), nil
		}
		l.partial = rest
		var line struct {
			Msg      string `json:"msg"`
			Outcome  string `json:"outcome"`
			TookOver bool   `json:"tookOver"`
			Err      string `json:"err"`
		}
		if json.Unmarshal(text, &line) != nil || line.Msg != "invocation" {
			continue
		}
		if line.Outcome != "" {
			l.outcomes[line.Outcome]++
		}
		if line.TookOver {
			l.tookOver++
		}
		if strings.Contains(line.Err, idempotency.ErrFenced.Error()) {
			l.fenced++
		}
	}
}

// KeyTakeovers returns how many requests took a stale idempotency key over
// and how many were fenced, as the handler logged them.
func (l *OutcomeLog) KeyTakeovers() (tookOver, fenced int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.tookOver, l.fenced
}

// Outcomes returns how many invocations ended in each outcome.
func (l *OutcomeLog) Outcomes() map[string]int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return maps.Clone(l.outcomes)
}

// Summary counts what became of the messages.
type Summary struct {
	Settlements map[hostemu.Settlement]int
	Failures    map[string]int // failed invocations by cause
	Final       map[string]int // messages by final state
	Deliveries  int
	Envelopes   int // parking envelopes written, repeats included
}

// Summary is the tracker's counts.
func (t *Tracker) Summary() Summary {
	t.mu.Lock()
	defer t.mu.Unlock()
	rep := Summary{Settlements: maps.Clone(t.settlements), Failures: maps.Clone(t.failures), Final: map[string]int{}}
	for _, f := range t.byMsg {
		rep.Deliveries += f.deliveries
		rep.Envelopes += len(f.parked)
		switch {
		case f.final == hostemu.DeadLettered:
			rep.Final["dead-lettered ("+hostemu.ReasonMaxDeliveryCountExceeded+")"]++
		case f.final == "":
			rep.Final["never settled"]++
		case f.finalParked != nil:
			rep.Final["parked "+f.finalParked.Reason]++
		default:
			rep.Final["completed"]++
		}
	}
	return rep
}
