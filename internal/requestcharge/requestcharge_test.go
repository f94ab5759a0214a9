package requestcharge

import (
	"context"
	"math"
	"sync"
	"testing"
)

// TestAddCountsWhatAStoreReports: every positive charge reported under the
// context counts, concurrently too, to the thousandth; a context without a
// Counter, and charges that are not a cost (zero, negative, infinite, NaN), are
// ignored rather than corrupting the total.
func TestAddCountsWhatAStoreReports(t *testing.T) {
	Add(context.Background(), 5) // no Counter: nothing to count, no panic
	ctx, c := With(context.Background())
	var wg sync.WaitGroup
	for range 100 {
		wg.Go(func() { Add(ctx, 1.005) })
	}
	wg.Wait()
	for _, ignored := range []float64{0, -3, math.Inf(1), math.Inf(-1), math.NaN()} {
		Add(ctx, ignored)
	}
	if got := c.Units(); got != 100.5 {
		t.Errorf("Units() = %v, want 100.5", got)
	}
}
