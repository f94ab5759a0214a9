package chaos

import (
	"context"
	"time"
)

// waitFor polls cond every 50 ms until it holds (true) or ctx ends (false).
func waitFor(ctx context.Context, cond func() bool) bool {
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	for !cond() {
		select {
		case <-t.C:
		case <-ctx.Done():
			return false
		}
	}
	return true
}
