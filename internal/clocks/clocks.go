// Package clocks holds the rules that nest the handler's deadlines and an
// idempotency key's lifetimes in the clocks they live under
// (docs/contract.md §2). cmd/handler checks them at start on its settings;
// tools/bicepcheck checks them on the values a template gives, so a
// deployment the handler would refuse is caught before it is made.
package clocks

import (
	"fmt"
	"math"
	"time"

	"github.com/ordersink/orders-consumer/idempotency"
)

// percent is how much of a platform clock a deadline may take: the rest is
// the margin for answering and for the host's own work.
const percent = 90

// QueueLockDuration is the orders queue's lock duration as deployed (bicep
// lockDuration): the handler's QUEUE_LOCK_DURATION default and the host
// emulator's queue. tools/bicepcheck checks the template and the default
// against it.
const QueueLockDuration = time.Minute

// MaxTTL is the largest item ttl Cosmos DB accepts: 2^31 − 1 seconds.
const MaxTTL = math.MaxInt32 * time.Second

// Most is the part of clock a deadline living under it may take.
func Most(clock time.Duration) time.Duration {
	return time.Duration(float64(clock) * (percent / 100.0))
}

// Within checks that setting's value fits in the host clock named clock,
// whose length is limit.
func Within(setting string, value time.Duration, clock string, limit time.Duration) error {
	if most := Most(limit); value > most {
		return fmt.Errorf("%s %s exceeds the host's %s %s: it may take at most %s (%d%%)", setting, value, clock, limit, most, percent)
	}
	return nil
}

// KeyLifetime checks IDEMPOTENCY_LEASE and IDEMPOTENCY_KEY_TTL: a positive
// lease, and a record that outlives its lease and that Cosmos DB can expire.
func KeyLifetime(ttl, lease time.Duration) error {
	switch {
	case lease <= 0:
		return fmt.Errorf("IDEMPOTENCY_LEASE must be positive, got %s", lease)
	case ttl < lease:
		// A record that expired while its request still ran would let a
		// retry claim the key anew and run the work beside it.
		return fmt.Errorf("IDEMPOTENCY_KEY_TTL (%s) must be at least IDEMPOTENCY_LEASE (%s): a started record would expire under the attempt that owns it", ttl, lease)
	case ttl > MaxTTL:
		return fmt.Errorf("IDEMPOTENCY_KEY_TTL %s exceeds what Cosmos DB takes as a ttl (%d seconds)", ttl, int64(MaxTTL/time.Second))
	}
	return nil
}

// SubmitWithinLease checks SUBMIT_DEADLINE against IDEMPOTENCY_LEASE. A
// SubmitOrder still running when its key's lease ends would be taken over by
// its own retry, which would run the work beside it. The request ends by its
// deadline, and the write finishing its key by idempotency.FinishTimeout
// after that.
func SubmitWithinLease(deadline, lease time.Duration) error {
	if most, held := Most(lease), deadline+idempotency.FinishTimeout; held > most {
		return fmt.Errorf("SUBMIT_DEADLINE %s plus the %s that finish its key exceed IDEMPOTENCY_LEASE %s: together they may take at most %s (%d%%), or a retry takes the running request's key over",
			deadline, idempotency.FinishTimeout, lease, most, percent)
	}
	return nil
}
