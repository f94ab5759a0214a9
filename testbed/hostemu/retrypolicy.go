package hostemu

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"time"

	"github.com/ordersink/orders-consumer/internal/funcapp"
)

// RetryPolicy is a function.json "retry" block as the WebJobs SDK applies it
// to a trigger that honours it (the Cosmos DB trigger does; Service Bus does
// not, docs/host-wire-format.md): the same trigger value is executed again
// after a delay, and the trigger's checkpoint waits until the execution
// succeeds or the retries are spent.
type RetryPolicy struct {
	Strategy string // "fixedDelay" or "exponentialBackoff"
	// MaxRetryCount bounds the executions; -1 retries for ever.
	MaxRetryCount                                   int
	DelayInterval, MinimumInterval, MaximumInterval time.Duration
}

// LoadRetryPolicy reads the "retry" block of fn's function.json; nil when
// it has none.
func LoadRetryPolicy(fn *Function) (*RetryPolicy, error) {
	data, err := os.ReadFile(fn.Path)
	if err != nil {
		return nil, err
	}
	var doc struct {
		Retry *struct {
			Strategy        string `json:"strategy"`
			MaxRetryCount   *int   `json:"maxRetryCount"`
			DelayInterval   string `json:"delayInterval"`
			MinimumInterval string `json:"minimumInterval"`
			MaximumInterval string `json:"maximumInterval"`
		} `json:"retry"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", fn.Path, err)
	}
	r := doc.Retry
	if r == nil {
		return nil, nil
	}
	if r.MaxRetryCount == nil || *r.MaxRetryCount < -1 {
		return nil, fmt.Errorf("%s: retry.maxRetryCount must be -1 (for ever) or a count", fn.Path)
	}
	p := &RetryPolicy{Strategy: r.Strategy, MaxRetryCount: *r.MaxRetryCount}
	span := func(name, v string) (time.Duration, error) {
		d, err := funcapp.ParseTimeSpan(v)
		if err != nil {
			return 0, fmt.Errorf("%s: retry.%s: %w", fn.Path, name, err)
		}
		return d, nil
	}
	switch {
	case strings.EqualFold(r.Strategy, "fixedDelay"):
		p.DelayInterval, err = span("delayInterval", r.DelayInterval)
	case strings.EqualFold(r.Strategy, "exponentialBackoff"):
		if p.MinimumInterval, err = span("minimumInterval", r.MinimumInterval); err == nil {
			p.MaximumInterval, err = span("maximumInterval", r.MaximumInterval)
		}
		if err == nil && p.MinimumInterval > p.MaximumInterval {
			err = fmt.Errorf("%s: retry.minimumInterval is above maximumInterval", fn.Path)
		}
	default:
		err = fmt.Errorf("%s: retry.strategy %q is neither fixedDelay nor exponentialBackoff", fn.Path, r.Strategy)
	}
	if err != nil {
		return nil, err
	}
	return p, nil
}

// Spent reports whether no execution follows the failure of execution
// number failed (0 for the first). The SDK's WaitForNextExecutionAttempt
// stops when ++attempt >= MaxRetryCount, so maxRetryCount n allows n
// executions in all, not n retries after the first.
func (p *RetryPolicy) Spent(failed int) bool {
	return p.MaxRetryCount != -1 && failed+1 >= p.MaxRetryCount
}

// String is the policy as a run prints it.
func (p *RetryPolicy) String() string {
	count := fmt.Sprintf("at most %d executions", p.MaxRetryCount)
	if p.MaxRetryCount == -1 {
		count = "for ever"
	}
	if strings.EqualFold(p.Strategy, "fixedDelay") {
		return fmt.Sprintf("fixedDelay %s, %s", p.DelayInterval, count)
	}
	return fmt.Sprintf("exponentialBackoff %s to %s, %s", p.MinimumInterval, p.MaximumInterval, count)
}

// retryDelays are the delays between the executions of one trigger value.
// Its state lives as long as that value's retries, as the SDK keeps the
// delay strategy in the RetryContext's State.
type retryDelays struct {
	p        *RetryPolicy
	current  time.Duration
	exponent uint
	rnd      *rand.Rand
}

func (p *RetryPolicy) delays(rnd *rand.Rand) *retryDelays { return &retryDelays{p: p, rnd: rnd} }

// next is the delay before the next execution: the fixed delay, or the
// WebJobs SDK's RandomizedExponentialBackoffStrategy with deltaBackoff =
// minimumInterval: the minimum first, then minimum + 2^(k-1) × minimum ×
// a random factor in [0.8, 1.2), until the maximum is reached.
func (d *retryDelays) next() time.Duration {
	if strings.EqualFold(d.p.Strategy, "fixedDelay") {
		return d.p.DelayInterval
	}
	if d.current == d.p.MaximumInterval && d.exponent > 0 {
		return d.current
	}
	backoff := d.p.MinimumInterval
	if d.exponent > 0 {
		factor := 0.8 + 0.4*d.rnd.Float64()
		backoff += time.Duration(factor * float64(uint64(1)<<(d.exponent-1)) * float64(d.p.MinimumInterval))
	}
	if backoff < d.p.MaximumInterval {
		d.current = backoff
		d.exponent++
	} else {
		d.current = d.p.MaximumInterval
	}
	return d.current
}
