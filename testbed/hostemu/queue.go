package hostemu

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/ordersink/orders-consumer/internal/clocks"
	"github.com/ordersink/orders-consumer/orders"
)

// DefaultMaxDeliveryCount is the orders queue's maxDeliveryCount (bicep): one
// past the handler's retry budget, so a message is parked before the broker
// dead-letters it.
const DefaultMaxDeliveryCount = orders.DefaultRetryBudget + 1

// DefaultLockDuration is the orders queue's lock duration.
const DefaultLockDuration = clocks.QueueLockDuration

// ReasonMaxDeliveryCountExceeded is the broker's dead-letter reason.
const ReasonMaxDeliveryCountExceeded = "MaxDeliveryCountExceeded"

// ErrDrained is returned by Receive when every message has been completed or
// dead-lettered.
var ErrDrained = errors.New("queue drained")

// Queue is one Service Bus queue in peek-lock mode: a delivered message stays
// locked until it is completed or its lock expires (LockDuration after the
// receive or the last renewal); an abandoned one, one whose lock expired or
// whose completion is lost is available again at once with DeliveryCount+1;
// past MaxDeliveryCount deliveries it moves to the dead-letter list.
type Queue struct {
	Name             string
	MaxDeliveryCount int
	// LockDuration is how long a delivery stays locked without a renewal
	// (NewQueue: DefaultLockDuration). Set it before the first receive; a
	// test scales it down (2 s) to see expiries in seconds.
	LockDuration time.Duration
	// DuplicateDetection is the queue's duplicate detection window (0 =
	// off): a message whose MessageId was sent within it is accepted and
	// dropped, so no consumer ever sees it.
	DuplicateDetection time.Duration

	mu           sync.Mutex
	holds        int        // producers still sending: an empty queue is not drained
	retry        []*entry   // redeliveries, served first
	ready        [][]*entry // units in send order; a unit is one burst
	outstanding  int
	completed    int
	lost         int
	expiredLocks int
	deadLetters  []DeadLetter
	dropped      []*Message
	lastSent     map[string]time.Time // MessageId -> last send, for duplicate detection
	changed      chan struct{}
	nextSequence int64
	now          func() time.Time
	newLockToken func() string
}

// DeadLetter is a message the broker moved to the dead-letter sub-queue.
type DeadLetter struct {
	Message       *Message
	DeliveryCount int
	Reason        string
	Description   string
}

type entry struct {
	msg          *Message
	deliveries   int
	lostLeft     int
	lock         lock
	deadLettered bool
}

// NewQueue returns an empty queue; maxDeliveryCount 0 means the default.
func NewQueue(name string, maxDeliveryCount int) *Queue {
	if maxDeliveryCount <= 0 {
		maxDeliveryCount = DefaultMaxDeliveryCount
	}
	return &Queue{Name: name, MaxDeliveryCount: maxDeliveryCount, LockDuration: DefaultLockDuration, changed: make(chan struct{}),
		nextSequence: 1, now: time.Now, newLockToken: newGUID}
}

// Send enqueues messages in order, numbering them; adjacent messages with the
// same non-zero Burst become one unit, delivered together.
func (q *Queue) Send(msgs ...*Message) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, m := range msgs {
		now := q.now().UTC()
		if q.DuplicateDetection > 0 {
			if q.lastSent == nil {
				q.lastSent = map[string]time.Time{}
			}
			if kept, seen := q.lastSent[m.MessageID]; seen && now.Sub(kept) < q.DuplicateDetection {
				q.dropped = append(q.dropped, m)
				continue
			}
			q.lastSent[m.MessageID] = now
		}
		m.SequenceNumber = q.nextSequence
		q.nextSequence++
		m.EnqueuedTime = now
		e := &entry{msg: m, lostLeft: m.LoseCompletions}
		if n := len(q.ready); n > 0 && m.Burst != 0 && q.ready[n-1][0].msg.Burst == m.Burst {
			q.ready[n-1] = append(q.ready[n-1], e)
		} else {
			q.ready = append(q.ready, []*entry{e})
		}
		q.outstanding++
	}
	q.notifyLocked()
}

// Hold keeps the queue open while a producer may still send (an HTTP front
// door, a long-running session): until release is called, receivers wait on
// an empty queue instead of seeing ErrDrained. release may be called more
// than once.
func (q *Queue) Hold() (release func()) {
	q.mu.Lock()
	q.holds++
	q.mu.Unlock()
	return sync.OnceFunc(func() {
		q.mu.Lock()
		q.holds--
		q.notifyLocked()
		q.mu.Unlock()
	})
}

// receive waits for messages and returns up to limit of them: with fill, a
// batch; without, the next unit (one message, or the part of a burst that
// fits: the copies that must be in flight at the same time).
func (q *Queue) receive(ctx context.Context, limit int, fill bool) ([]Delivery, error) {
	limit = max(limit, 1)
	for {
		q.mu.Lock()
		if q.outstanding == 0 && q.holds == 0 {
			q.mu.Unlock()
			return nil, ErrDrained
		}
		if taken := q.takeLocked(limit, fill); len(taken) > 0 {
			ds := make([]Delivery, len(taken))
			for i, e := range taken {
				e.deliveries++
				token := q.newLockToken()
				ds[i] = Delivery{Message: e.msg, DeliveryCount: e.deliveries, LockToken: token,
					LockedUntil: q.lockLocked(e, token), entry: e}
			}
			q.mu.Unlock()
			return ds, nil
		}
		wait := q.changed
		q.mu.Unlock()
		select {
		case <-wait:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

func (q *Queue) takeLocked(limit int, fill bool) []*entry {
	var out []*entry
	for len(out) < limit {
		switch {
		case len(q.retry) > 0:
			out = append(out, q.retry[0])
			q.retry = q.retry[1:]
		case len(q.ready) > 0:
			unit := q.ready[0]
			n := min(len(unit), limit-len(out))
			out = append(out, unit[:n]...)
			if n < len(unit) {
				q.ready[0] = unit[n:]
			} else {
				q.ready = q.ready[1:]
			}
		default:
			return out
		}
		if !fill {
			return out
		}
	}
	return out
}

// Complete settles a delivery after a successful invocation: Completed, or
// CompletionLost when the broker drops the completion (an injected fault:
// the message is delivered again), or LockLost / DeadLettered when the lock
// had expired before (the expiry already gave the message back).
func (q *Queue) Complete(d Delivery) Settlement {
	q.mu.Lock()
	defer q.mu.Unlock()
	defer q.notifyLocked()
	if s, lost := q.releaseLocked(d); lost {
		return s
	}
	if d.entry.lostLeft > 0 {
		d.entry.lostLeft--
		q.lost++
		q.redeliverLocked(d.entry, "lock expired: the completion was lost")
		return CompletionLost
	}
	q.outstanding--
	q.completed++
	return Completed
}

// Abandon settles a delivery after a failed invocation: the message is
// delivered again at once (Abandoned), or dead-lettered once it has been
// delivered MaxDeliveryCount times; a lock that had expired gives LockLost.
func (q *Queue) Abandon(d Delivery, cause string) Settlement {
	q.mu.Lock()
	defer q.mu.Unlock()
	defer q.notifyLocked()
	if s, lost := q.releaseLocked(d); lost {
		return s
	}
	if q.redeliverLocked(d.entry, cause) {
		return DeadLettered
	}
	return Abandoned
}

func (q *Queue) redeliverLocked(e *entry, cause string) bool {
	if e.deliveries >= q.MaxDeliveryCount {
		e.deadLettered = true
		q.outstanding--
		q.deadLetters = append(q.deadLetters, DeadLetter{Message: e.msg, DeliveryCount: e.deliveries,
			Reason: ReasonMaxDeliveryCountExceeded, Description: cause})
		return true
	}
	q.retry = append(q.retry, e)
	return false
}

func (q *Queue) notifyLocked() {
	close(q.changed)
	q.changed = make(chan struct{})
}

// QueueCounts is a snapshot of a queue's settlement counters. Sent counts
// the messages enqueued, not those duplicate detection dropped.
type QueueCounts struct {
	Sent, Dropped, Outstanding, Completed, LostCompletions, DeadLettered int
	// ExpiredLocks counts deliveries whose lock expired before they were
	// settled (a batch past LockDuration, a single message past its
	// renewals): each was redelivered with DeliveryCount+1.
	ExpiredLocks int
}

// Counts returns the queue's counters.
func (q *Queue) Counts() QueueCounts {
	q.mu.Lock()
	defer q.mu.Unlock()
	return QueueCounts{Sent: int(q.nextSequence - 1), Dropped: len(q.dropped), Outstanding: q.outstanding,
		Completed: q.completed, LostCompletions: q.lost, DeadLettered: len(q.deadLetters), ExpiredLocks: q.expiredLocks}
}

// Dropped returns the messages duplicate detection dropped.
func (q *Queue) Dropped() []*Message {
	q.mu.Lock()
	defer q.mu.Unlock()
	return append([]*Message(nil), q.dropped...)
}

// DeadLetters returns the dead-lettered messages.
func (q *Queue) DeadLetters() []DeadLetter {
	q.mu.Lock()
	defer q.mu.Unlock()
	return append([]DeadLetter(nil), q.deadLetters...)
}
