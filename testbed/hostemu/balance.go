package hostemu

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"maps"
	"math"
	"slices"
	"strconv"
	"sync"
	"time"
)

// LeaseClocks are the change feed processor's lease intervals
// (ChangeFeedLeaseOptions in Microsoft.Azure.Cosmos, the trigger's
// leaseAcquireInterval, leaseRenewInterval, leaseExpirationInterval): how
// often an instance balances the leases, how often it renews those it
// owns, and how long a lease not renewed stays its owner's.
type LeaseClocks struct {
	Acquire, Renew, Expire time.Duration
}

// DefaultLeaseClocks are the processor's defaults.
var DefaultLeaseClocks = LeaseClocks{Acquire: 13 * time.Second, Renew: 17 * time.Second, Expire: 60 * time.Second}

// errLeaseLost: another instance owns the lease now.
var errLeaseLost = errors.New("lease lost")

// rangeOf is the feed range of a partition key among n: its hash, as
// Cosmos DB spreads logical partitions over physical ones.
func rangeOf(pk string, n int) string {
	if n <= 1 {
		return "0"
	}
	h := fnv.New32a()
	h.Write([]byte(pk))
	return strconv.Itoa(int(h.Sum32() % uint32(n)))
}

// leasesToTake is what one balancing pass of instance me takes, as the
// processor's EqualPartitionsBalancingStrategy decides: leases without an
// owner or not renewed within expire first; else, when me owns fewer than
// its share, one lease of the instance owning the most, if that one owns
// more than its share.
func leasesToTake(all []*Lease, me string, expire time.Duration, now time.Time) []*Lease {
	owned := map[string]int{me: 0}
	var free []*Lease
	for _, l := range all {
		stamp, err := time.Parse(time.RFC3339Nano, l.Timestamp)
		if l.Owner == "" || err != nil || stamp.Add(expire).Before(now) {
			free = append(free, l)
			continue
		}
		owned[l.Owner]++
	}
	target := max(1, int(math.Ceil(float64(len(all))/float64(len(owned)))))
	need := target - owned[me]
	switch {
	case need <= 0 || len(all) == 0:
		return nil
	case len(free) > 0:
		return free[:min(need, len(free))]
	}
	richest := ""
	for _, w := range slices.Sorted(maps.Keys(owned)) {
		if owned[w] >= owned[richest] {
			richest = w
		}
	}
	share := target
	if need > 1 {
		share--
	}
	if owned[richest] <= share {
		return nil
	}
	for _, l := range all {
		if l.Owner == richest {
			return []*Lease{l}
		}
	}
	return nil
}

// balance takes this instance's share of the leases every Acquire
// interval, and reads each lease it takes until it loses it, ctx ends or
// Retire is called; it returns once its readers have.
func (cf *ChangeFeed) balance(ctx context.Context, read func(context.Context, *Lease)) {
	owned := map[string]context.CancelFunc{}
	var readers sync.WaitGroup
	defer func() {
		// The readers end their batch (Retire) or stop (ctx); then the
		// renewers are told to stop, before Run gives the leases back.
		readers.Wait()
		for _, stop := range owned {
			stop()
		}
	}()
	for {
		stepCtx, cancel := context.WithTimeout(ctx, readTimeout)
		all, err := cf.store.list(stepCtx)
		for _, l := range leasesToTake(all, cf.owner, cf.clocks.Expire, time.Now()) {
			if cf.retired() {
				break // a retiring instance takes no lease, steals none
			}
			if stop, ok := owned[l.LeaseToken]; ok {
				stop() // ours once, lost since: its reader is stopping
			}
			prev := l.Owner // take writes into l
			taken, err := cf.store.take(stepCtx, l)
			if err != nil {
				cf.cfg.Log(fmt.Sprintf("%s: take lease %s: %v", cf.fn.Name, l.ID, err))
				continue
			}
			rctx, stop := context.WithCancel(ctx)
			owned[l.LeaseToken] = stop
			cf.noteLease(prev != "" && prev != cf.owner)
			renewed := *taken // the renewer's own copy: update writes into it
			go cf.renew(rctx, stop, &renewed)
			readers.Go(func() { read(rctx, taken) })
		}
		cancel()
		if err != nil {
			cf.cfg.Log(fmt.Sprintf("%s: list the leases: %v", cf.fn.Name, err))
		}
		if !waitOr(ctx, cf.retiring.Done(), cf.clocks.Acquire) {
			return
		}
	}
}

// renew keeps l this instance's, as the processor's LeaseRenewer: half an
// interval after taking it, then every interval; losing it stops its
// reader.
func (cf *ChangeFeed) renew(ctx context.Context, stop context.CancelFunc, l *Lease) {
	for d := cf.clocks.Renew / 2; wait(ctx, d); d = cf.clocks.Renew {
		stepCtx, cancel := context.WithTimeout(ctx, readTimeout)
		next, err := cf.store.update(stepCtx, l, cf.owner, func(*Lease) {})
		cancel()
		if err == nil {
			l = next
		}
		if errors.Is(err, errLeaseLost) {
			cf.cfg.Log(fmt.Sprintf("%s: lease %s lost on renewal", cf.fn.Name, l.ID))
			stop()
			return
		}
	}
}

// release gives up the leases this instance owns, as a processor that
// stops does: the others take them at their next pass.
func (cf *ChangeFeed) release(ctx context.Context) {
	all, err := cf.store.list(ctx)
	for _, l := range all {
		if err == nil && l.Owner == cf.owner {
			_, _ = cf.store.update(ctx, l, cf.owner, func(l *Lease) { l.Owner = "" })
		}
	}
}

func (cf *ChangeFeed) noteLease(tookOver bool) {
	cf.mu.Lock()
	defer cf.mu.Unlock()
	cf.stats.Acquired++
	if tookOver {
		cf.stats.TakenOver++
	}
}

// Add sums two instances' counts; Leases, the same for all, is kept.
func (s ChangeFeedStats) Add(o ChangeFeedStats) ChangeFeedStats {
	return ChangeFeedStats{Leases: max(s.Leases, o.Leases), Invocations: s.Invocations + o.Invocations,
		Batches: s.Batches + o.Batches, Documents: s.Documents + o.Documents, Failed: s.Failed + o.Failed, Retries: s.Retries + o.Retries,
		Skipped: s.Skipped + o.Skipped, SkippedDocuments: s.SkippedDocuments + o.SkippedDocuments, Kills: s.Kills + o.Kills,
		Acquired: s.Acquired + o.Acquired, TakenOver: s.TakenOver + o.TakenOver, Lost: s.Lost + o.Lost,
		Uncheckpointed: slices.Concat(s.Uncheckpointed, o.Uncheckpointed)}
}
