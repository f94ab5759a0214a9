package hostemu

import (
	"net/http"
	"testing"
	"time"
)

// The host receives only what it can start: a burst that arrives while most
// slots are busy is split, not held received while its locks run out
// unrenewed behind the busy invocations (a make chaos run: five copies
// received during the unreachable outage lost their locks a minute later,
// before their invocations started). Each copy starts as a slot frees up,
// and every one completes.
func TestBurstWaitsForFreeSlotsBeforeItIsReceived(t *testing.T) {
	srv := httptestServer(t, http.HandlerFunc(fakeFunction))
	copies := []*Message{msg("burst"), msg("burst"), msg("burst")}
	for _, m := range copies {
		m.Burst = 9
	}
	q := lockedQueue(append([]*Message{msg(sleepy(4*testLock, "busy"))}, copies...)...)
	invs := runQueue(t, srv, singleFunction(), Options{MaxConcurrentCalls: 2, MaxAutoLockRenewalDuration: time.Minute}, q)
	for _, inv := range invs {
		if inv.Settlements[0] != Completed || inv.Deliveries[0].DeliveryCount != 1 {
			t.Errorf("%s delivery %d: %s, want completed at delivery 1", inv.Deliveries[0].Message.MessageID,
				inv.Deliveries[0].DeliveryCount, inv.Settlements[0])
		}
	}
	if c := q.Counts(); c.ExpiredLocks != 0 || c.Completed != 4 {
		t.Errorf("queue counts %+v, want no expired lock and the 4 messages completed", c)
	}
}
