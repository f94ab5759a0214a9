package retrying

import (
	"testing"
	"time"
)

// TestBackoffAtItsSmallestSteps: a pause of a nanosecond or none has no room
// for jitter and is returned as it is (rand.N would panic on zero); from two
// nanoseconds on, the pause is within [d/2, d).
func TestBackoffAtItsSmallestSteps(t *testing.T) {
	for _, tc := range []struct {
		b    Backoff
		want time.Duration
	}{
		{Backoff{Initial: 0, Max: 0}, 0},
		{Backoff{Initial: 1, Max: 1}, 1},
		{Backoff{Initial: 1, Max: time.Second}, 1},
		{Backoff{Initial: 2, Max: time.Second}, 1},
	} {
		if d := tc.b.Pause(0); d != tc.want {
			t.Errorf("%+v.Pause(0) = %s, want %s", tc.b, d, tc.want)
		}
	}
}

// TestHealthProbePauseFollowsTheInterval: the first pause between probes
// is a tenth of the probe interval (with jitter, half of it to all of it),
// DefaultProbeInterval's when none is set.
func TestHealthProbePauseFollowsTheInterval(t *testing.T) {
	for _, tc := range []struct {
		interval, tenth time.Duration
	}{
		{0, DefaultProbeInterval / 10},
		{200 * time.Millisecond, 20 * time.Millisecond},
	} {
		h := &Health{ProbeInterval: tc.interval}
		for range 50 {
			if d := h.pause(); d < tc.tenth/2 || d > tc.tenth {
				t.Fatalf("ProbeInterval %s: first pause %s, want within [%s, %s]", tc.interval, d, tc.tenth/2, tc.tenth)
			}
		}
	}
}
