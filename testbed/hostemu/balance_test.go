package hostemu

import (
	"context"
	"net/http"
	"slices"
	"testing"
	"time"
)

// One balancing pass takes what the change feed processor's
// EqualPartitionsBalancingStrategy takes.
func TestLeasesToTake(t *testing.T) {
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	fresh, old := now.Format(time.RFC3339Nano), now.Add(-time.Minute).Format(time.RFC3339Nano)
	lease := func(token, owner, stamp string) *Lease {
		return &Lease{LeaseToken: token, Owner: owner, Timestamp: stamp}
	}
	for _, tc := range []struct {
		name string
		all  []*Lease
		want []string
	}{
		{"new leases: all of them", []*Lease{lease("0", "", fresh), lease("1", "", fresh)}, []string{"0", "1"}},
		{"a dead owner's (expired), up to the share",
			[]*Lease{lease("0", "b", old), lease("1", "b", old), lease("2", "c", fresh), lease("3", "c", fresh), lease("4", "c", fresh)}, []string{"0", "1"}},
		{"balanced: nothing", []*Lease{lease("0", "me", fresh), lease("1", "b", fresh)}, nil},
		{"one stolen from the richest", []*Lease{lease("0", "b", fresh), lease("1", "b", fresh), lease("2", "b", fresh)}, []string{"0"}},
		{"the richest holds only its share", []*Lease{lease("0", "b", fresh), lease("1", "b", fresh), lease("2", "c", fresh), lease("3", "me", fresh)}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, l := range leasesToTake(tc.all, "me", 10*time.Second, now) {
				got = append(got, l.LeaseToken)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("took %v, want %v", got, tc.want)
			}
		})
	}
}

// Two instances share the feed's ranges, each reading some; when one
// crashes, the other takes its leases over once they expire and reads on
// from their checkpoints: every document comes at least once.
func TestChangeFeedInstancesShareAndTakeOverLeases(t *testing.T) {
	r := newFeedRig(t)
	r.invoking(r.scripted(func(int) int { return http.StatusOK }))
	cfg := ChangeFeedConfig{Ranges: 4, Clocks: LeaseClocks{Acquire: 50 * time.Millisecond, Renew: 100 * time.Millisecond, Expire: 500 * time.Millisecond}}
	a, b := r.start(cfg), r.start(cfg)
	// The first to start takes every new lease; the other steals its share
	// at its next balancing pass. Read once both hold some.
	r.until(func() bool { return a.Stats().Acquired > 0 && b.Stats().Acquired > 0 }, "both instances hold leases")
	partitions := []string{"P1", "P2", "P3", "P4", "P5", "P6", "P7", "P8"}
	r.write(wave(partitions, 1, 3)...)
	r.drain(a, b)
	if sa, sb := a.Stats(), b.Stats(); sa.Acquired == 0 || sb.Acquired == 0 {
		t.Errorf("leases taken: %d and %d; want both instances to read", sa.Acquired, sb.Acquired)
	}
	b.crash()
	r.write(wave(partitions, 4, 5)...)
	r.drain(a)
	if s := a.Stats(); s.TakenOver == 0 {
		t.Errorf("stats %+v: want the crashed instance's leases taken over", s)
	}
	seen := map[string]bool{}
	for _, c := range r.recorded() {
		for _, d := range c.docs {
			seen[d.ID] = true
		}
	}
	for _, d := range wave(partitions, 1, 5) {
		if !seen[d.ID] {
			t.Errorf("%s was never delivered", d.ID)
		}
	}
}

// until waits for cond, checked at every lease clock's pace, and fails the
// test when it does not hold within 30 s (the rig's deadline for any wait).
func (r *feedRig) until(cond func() bool, what string) {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-ctx.Done():
			r.t.Fatalf("waiting until %s: %v", what, ctx.Err())
		case <-tick.C:
		}
	}
}
