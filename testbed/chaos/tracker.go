package chaos

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"sync"

	"github.com/ordersink/orders-consumer/testbed/hostemu"
)

// parked is the part of a parking envelope (docs/contract.md §6) the checks read.
type parked struct {
	Reason        string `json:"reason"`
	Description   string `json:"description"`
	OrderID       string `json:"orderId"`
	DeliveryCount int    `json:"deliveryCount"`
	StoredHash    string `json:"storedHash"`
	IncomingHash  string `json:"incomingHash"`
}

// fate is what happened to one message across its deliveries.
type fate struct {
	deliveries int
	// final is Completed or DeadLettered once the broker is done with the
	// message; finalParked is the envelope of the delivery it completed
	// with, if that one parked.
	final       hostemu.Settlement
	finalParked *parked
	// parked are all envelopes its deliveries wrote, completion lost or not.
	parked []parked
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
}

// NewTracker follows msgs.
func NewTracker(msgs []*hostemu.Message) *Tracker {
	t := &Tracker{byMsg: map[*hostemu.Message]*fate{}, settlements: map[hostemu.Settlement]int{},
		failures: map[string]int{}}
	for _, m := range msgs {
		t.byMsg[m] = &fate{}
	}
	return t
}

// Observe books one finished invocation; pass it as hostemu.Options.Observe.
func (t *Tracker) Observe(inv *hostemu.Invocation) {
	var envs []parked
	for _, out := range inv.Outputs {
		var p parked
		if out.Binding == "parking" && json.Unmarshal([]byte(out.Text), &p) == nil {
			envs = append(envs, p)
		}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.invocations++
	if !inv.OK() {
		t.failures[failureCause(inv)]++
	}
	for i, d := range inv.Deliveries {
		f := t.byMsg[d.Message]
		if f == nil {
			continue
		}
		f.deliveries++
		s := inv.Settlements[i]
		t.settlements[s]++
		// A single-message invocation parks at most its own message.
		var env *parked
		if len(inv.Deliveries) == 1 && len(envs) > 0 {
			env = &envs[0]
			f.parked = append(f.parked, envs...)
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
	i := bytes.LastIndexByte(l.partial, '\n')
	if i < 0 {
		return len(p), nil
	}
	sc := bufio.NewScanner(bytes.NewReader(l.partial[:i+1]))
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		var line struct {
			Msg     string `json:"msg"`
			Outcome string `json:"outcome"`
		}
		if json.Unmarshal(sc.Bytes(), &line) == nil && line.Msg == "invocation" && line.Outcome != "" {
			l.outcomes[line.Outcome]++
		}
	}
	l.partial = append(l.partial[:0], l.partial[i+1:]...)
	return len(p), nil
}

// Outcomes returns how many invocations ended in each outcome.
func (l *OutcomeLog) Outcomes() map[string]int {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make(map[string]int, len(l.outcomes))
	for k, v := range l.outcomes {
		out[k] = v
	}
	return out
}
