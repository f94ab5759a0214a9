// Package requestcharge adds up the request units a store reports for the
// work done under one context: the cost of one message or request, logged
// per invocation so operators can see what each outcome costs.
package requestcharge

import (
	"context"
	"math"
	"sync/atomic"
)

// Counter adds up the request units reported under one context. It is safe
// for concurrent use.
type Counter struct {
	milli atomic.Int64 // thousandths of a request unit
}

type counterKey struct{}

// With returns a context under which a store's reported request units are
// added to the returned Counter.
func With(ctx context.Context) (context.Context, *Counter) {
	c := &Counter{}
	return context.WithValue(ctx, counterKey{}, c), c
}

// Add adds units to the Counter of ctx, if it has one. Stores call it for
// every response, failed ones included: a throttled or conflicting request
// is billed too.
func Add(ctx context.Context, units float64) {
	if c, ok := ctx.Value(counterKey{}).(*Counter); ok && units > 0 && !math.IsInf(units, 0) {
		c.milli.Add(int64(math.Round(units * 1000)))
	}
}

// Units is the total so far.
func (c *Counter) Units() float64 { return float64(c.milli.Load()) / 1000 }
