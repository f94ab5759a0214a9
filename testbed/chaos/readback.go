package chaos

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"time"

	"github.com/ordersink/orders-consumer/testbed/orderstream"
)

// OrderView is the last answer of GET /api/orders/{orderId} (GetOrder,
// docs/http-api.md) for an order a client submitted.
type OrderView struct {
	OrderID     string
	Status      int // 0: no answer
	Err         string
	State       string // accepted or submitted
	RequestHash string
}

// ReadBack asks GetOrder for up to n of the orders accepted over HTTP,
// spread evenly over their orderIds, as a client following Location does:
// each until it answers `accepted` (the consumer may still be storing it)
// or patience runs out for that order. Each request waits for its answer as
// long as the host lets an invocation run: how fast the store answers is
// the handler's SUBMIT_DEADLINE to bound, not the client's to guess. The
// views are kept for ReadBackCheck.
func (l *SubmitLedger) ReadBack(ctx context.Context, base string, cfg SubmitConfig, n int, patience time.Duration) {
	ids := acceptedOrders(l.Answers())
	if len(ids) > n {
		sample := make([]string, n)
		for i := range sample {
			sample[i] = ids[i*len(ids)/n]
		}
		ids = sample
	}
	c := &http.Client{}
	for _, id := range ids {
		var v OrderView
		ctx, cancel := context.WithTimeout(ctx, patience)
		waitFor(ctx, func() bool {
			got := getOrder(ctx, c, base, cfg.FunctionKey, id)
			if got.Status == 0 && ctx.Err() != nil && v.Status != 0 {
				return false // cut by the patience: the last answer stands
			}
			v = got
			return v.State == "accepted"
		})
		cancel()
		l.mu.Lock()
		l.views = append(l.views, v)
		l.mu.Unlock()
	}
}

// Views returns what ReadBack got.
func (l *SubmitLedger) Views() []OrderView {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]OrderView(nil), l.views...)
}

// acceptedOrders is the orderIds that got a 2xx for their own payload,
// sorted.
func acceptedOrders(answers []Answer) []string {
	seen := map[string]bool{}
	var ids []string
	for _, a := range answers {
		if !a.Reuse && a.Status/100 == 2 && !seen[a.OrderID] {
			seen[a.OrderID] = true
			ids = append(ids, a.OrderID)
		}
	}
	sort.Strings(ids)
	return ids
}

func getOrder(ctx context.Context, c *http.Client, base, functionKey, id string) OrderView {
	v := OrderView{OrderID: id}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/api/orders/"+url.PathEscape(id), nil)
	if err != nil {
		v.Err = err.Error()
		return v
	}
	resp, b, err := call(c, req, functionKey)
	if err != nil {
		v.Err = err.Error()
		return v
	}
	v.Status = resp.StatusCode
	var o struct {
		State       string `json:"state"`
		RequestHash string `json:"requestHash"`
	}
	if resp.StatusCode == http.StatusOK {
		if err := json.Unmarshal(b, &o); err != nil {
			v.Err = "answer is not an order view: " + err.Error()
		}
	}
	v.State, v.RequestHash = o.State, o.RequestHash
	return v
}

// ReadBackCheck judges the views against the stored orders (orderId to the
// requestHash of its order document): every sampled order is `accepted`
// with the fingerprint the consumer stored. A view whose last answer is 503
// is the handler keeping its promise when the store did not answer within
// SUBMIT_DEADLINE (a slow emulator, a loaded machine): it is named, not
// judged. It checks nothing when no order was read back.
func ReadBackCheck(views []OrderView, stored map[string]string) *Check {
	c := &Check{Name: "HTTP: GET answers accepted with the stored fingerprint (a sample of the orders accepted over HTTP)"}
	unanswered := 0
	for _, v := range views {
		if v.Status == http.StatusServiceUnavailable {
			unanswered++
			continue
		}
		c.Checked++
		switch {
		case v.Status != http.StatusOK:
			c.fail("GET %s: %s", v.OrderID, describe(Answer{Status: v.Status, Err: v.Err}))
		case v.Err != "":
			c.fail("GET %s: %s", v.OrderID, v.Err)
		case v.State != "accepted":
			c.fail("GET %s: state %q, want accepted", v.OrderID, v.State)
		case stored[v.OrderID] == "":
			c.fail("GET %s: accepted, but no order document was stored", v.OrderID)
		case v.RequestHash != stored[v.OrderID]:
			c.fail("GET %s: requestHash %s, the stored order's is %s", v.OrderID, v.RequestHash, stored[v.OrderID])
		}
	}
	if unanswered > 0 {
		c.Name += fmt.Sprintf("; %d not judged: answered 503 to the end, the store did not answer within SUBMIT_DEADLINE", unanswered)
	}
	return c
}

// Traffic is a RigConfig.Traffic that runs the ledger's submissions with
// cfg and then, while the queue is still open, reads back a sample of n of
// the orders accepted through GetOrder (ReadBack, judged by
// ReadBackCheck): make run's and make chaos's HTTP clients.
func (l *SubmitLedger) Traffic(cfg SubmitConfig, n int, patience time.Duration) func(context.Context, string, func() float64, func() bool) error {
	return func(ctx context.Context, base string, settled func() float64, inOutage func() bool) error {
		if err := Submit(ctx, base, cfg, l, settled, inOutage); err != nil {
			return err
		}
		l.ReadBack(ctx, base, cfg, n, patience)
		return nil
	}
}

// ReadBackSample is how many orders accepted over HTTP are read back
// through GetOrder; ReadBackPatience how long the consumer may take to
// store them once the last submission is answered.
const (
	ReadBackSample   = 20
	ReadBackPatience = time.Minute
)

// MeetOutages starts every tenth submission once an outage is on (or at the
// end of the stream if none comes), so that clients meet SubmitOrder's 503
// and Retry-After and retry through it.
func MeetOutages(subs []orderstream.Submission, outages []Outage) []orderstream.Submission {
	if len(outages) == 0 {
		return subs
	}
	out := slices.Clone(subs)
	for i := 0; i < len(out); i += 10 {
		out[i].DuringOutage, out[i].At = true, 1
	}
	return out
}
