package hostemu

import "time"

// lock is the broker's peek-lock on one delivery of a message, on the
// process's clock: a run shortens LockDuration and meets it in real time; the
// emulator's own tests meet it on virtual time (testing/synctest).
type lock struct {
	token string // the delivery holding the lock; "" when none does
	until time.Time
	timer *time.Timer
	// expired remembers, per lock token whose lock ran out, whether the
	// expiry dead-lettered the message (its last delivery) rather than	// redelivering it: the late settlement of that delivery reports it.
	expired map[string]bool
}

// lockLocked locks e for the delivery token until LockDuration from now and
// arms the expiry. LockDuration 0 means locks never expire.
func (q *Queue) lockLocked(e *entry, token string) time.Time {
	e.lock.token = token
	if q.LockDuration <= 0 {
		e.lock.until = maxDateTime
		return e.lock.until
	}
	e.lock.until = time.Now().Add(q.LockDuration)
	if e.lock.timer != nil {
		e.lock.timer.Stop()
	}
	e.lock.timer = time.AfterFunc(q.LockDuration, func() { q.expire(e, token) })
	return e.lock.until
}

// expire gives the message back when the delivery's lock ran out without a
// renewal: available again at once with DeliveryCount+1 (or dead-lettered at
// MaxDeliveryCount), while the invocation that held it may still be running.
func (q *Queue) expire(e *entry, token string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if e.lock.token != token {
		return // settled, or a later delivery holds the lock
	}
	if left := time.Until(e.lock.until); left > 0 {
		e.lock.timer.Reset(left) // renewed since the timer was armed
		return
	}
	e.lock.token = ""
	q.expiredLocks++
	if e.lock.expired == nil {
		e.lock.expired = map[string]bool{}
	}
	e.lock.expired[token] = q.redeliverLocked(e, "the lock expired before the invocation settled the message")
	q.notifyLocked()
}

// renewLock extends the delivery's lock to LockDuration from now, like the
// Service Bus processor's automatic renewal. It returns false when the lock
// is already lost (expired or settled).
func (q *Queue) renewLock(d Delivery) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if d.entry.lock.token != d.LockToken {
		return false
	}
	if q.LockDuration > 0 {
		d.entry.lock.until = time.Now().Add(q.LockDuration)
	}
	return true
}

// releaseLocked ends the delivery's lock before it is settled. lost is true
// when the lock had expired: the settlement fails (the broker's
// MessageLockLost) and s says what the expiry did with the message.
func (q *Queue) releaseLocked(d Delivery) (s Settlement, lost bool) {
	e := d.entry
	if e.lock.token != d.LockToken {
		if e.lock.expired[d.LockToken] {
			return DeadLettered, true
		}
		return LockLost, true
	}
	e.lock.token = ""
	if e.lock.timer != nil {
		e.lock.timer.Stop()
	}
	return "", false
}
