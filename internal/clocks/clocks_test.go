package clocks

import (
	"strings"
	"testing"
	"time"

	"github.com/ordersink/orders-consumer/idempotency"
)

// TestRulesAtTheirLimits: each rule accepts its boundary and refuses one
// step past it.
func TestRulesAtTheirLimits(t *testing.T) {
	lease := time.Minute
	for _, c := range []struct {
		name string
		err  error
		want string // "" = accepted
	}{
		{"deadline at 90 % of its clock", Within("MESSAGE_DEADLINE", 54*time.Second, "functionTimeout", time.Minute), ""},
		{"deadline a nanosecond past 90 %", Within("MESSAGE_DEADLINE", 54*time.Second+1, "functionTimeout", time.Minute), "it may take at most 54s (90%)"},
		{"ttl equal to the lease", KeyLifetime(lease, lease), ""},
		{"ttl below the lease", KeyLifetime(lease-1, lease), "must be at least IDEMPOTENCY_LEASE"},
		{"lease zero", KeyLifetime(time.Hour, 0), "IDEMPOTENCY_LEASE must be positive"},
		{"ttl at Cosmos DB's largest", KeyLifetime(MaxTTL, lease), ""},
		{"ttl past Cosmos DB's largest", KeyLifetime(MaxTTL+time.Second, lease), "2147483647 seconds"},
		{"deadline and key finish at 90 % of the lease", SubmitWithinLease(54*time.Second-idempotency.FinishTimeout, lease), ""},
		{"deadline and key finish past 90 % of the lease", SubmitWithinLease(54*time.Second-idempotency.FinishTimeout+1, lease), "together they may take at most 54s"},
	} {
		t.Run(c.name, func(t *testing.T) {
			switch {
			case c.want == "" && c.err != nil:
				t.Fatalf("refused: %v", c.err)
			case c.want != "" && c.err == nil:
				t.Fatalf("accepted, want %q", c.want)
			case c.want != "" && !strings.Contains(c.err.Error(), c.want):
				t.Fatalf("error %q, want it to contain %q", c.err, c.want)
			}
		})
	}
}
