package orders

import (
	"context"
	"math"
	"sync/atomic"
)

// RequestCharge adds up the request units a store reports for the work done
// under one context: the cost of one message, logged per invocation so
// operators can see what each outcome costs. It is safe for concurrent use.
type RequestCharge struct {
	milli atomic.Int64 // thousandths of a request unit
}

type chargeKey struct{}

// WithRequestCharge returns a context under which a store's reported request
// units are added to the returned RequestCharge.
func WithRequestCharge(ctx context.Context) (context.Context, *RequestCharge) {
	c := &RequestCharge{}
	return context.WithValue(ctx, chargeKey{}, c), c
}

// AddRequestCharge adds units to the RequestCharge of ctx, if it has one.
// Stores call it for every response, failed ones included: a throttled or
// conflicting request is billed too.
func AddRequestCharge(ctx context.Context, units float64) {
	if c, ok := ctx.Value(chargeKey{}).(*RequestCharge); ok && units > 0 && !math.IsInf(units, 0) {
		c.milli.Add(int64(math.Round(units * 1000)))
	}
}

// Units is the total so far.
func (c *RequestCharge) Units() float64 { return float64(c.milli.Load()) / 1000 }
