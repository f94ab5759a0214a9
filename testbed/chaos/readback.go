package chaos

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/ordersink/orders-consumer/testbed/faults"
	"github.com/ordersink/orders-consumer/testbed/orderstream"
	"github.com/ordersink/orders-consumer/testbed/rig"
	"github.com/ordersink/orders-consumer/testbed/verify"
)

// orderView is the last answer of GET /api/orders/{orderId} (GetOrder,
// docs/http-api.md) to one client for an order submitted over HTTP.
type orderView struct {
	OrderID string
	// Client asked; Owner says whether it is the client whose 2xx answer
	// named the order.
	Client      string
	Owner       bool
	Status      int // 0: no answer
	Err         string
	RequestHash string // of a 200
	ProblemType string // of a problem
	// Undone: the read-back's budget ran out before this read had an
	// answer.
	Undone bool
	// Body is a digest of the answer's body; Call and Return when the
	// request was sent and answered (the history check's).
	Body         string
	Call, Return time.Time
}

// ReadBack asks GetOrder for up to n of the orders answered 2xx over HTTP,
// spread evenly over their orderIds, once as the client it was answered to
// and once as the other client, each until an answer that is not 503 or
// patience for that order runs out. Each request waits for its answer as
// long as the host lets an invocation run: how fast the store answers is
// the handler's SUBMIT_DEADLINE to bound, not the client's to guess. The
// whole read-back takes at most budget: the reads it leaves undone are
// named, not checked. The views are kept for readBackCheck.
func (l *SubmitLedger) ReadBack(ctx context.Context, base string, keys map[string]string, n int, patience, budget time.Duration) {
	owners := answeredOrders(l.Answers())
	ids := slices.Sorted(maps.Keys(owners))
	if len(ids) > n {
		sample := make([]string, n)
		for i := range sample {
			sample[i] = ids[i*len(ids)/n]
		}
		ids = sample
	}
	c := &http.Client{Transport: readBackTransport}
	whole, cancelWhole := context.WithTimeout(ctx, budget)
	defer cancelWhole()
	for _, id := range ids {
		for _, client := range []string{owners[id], otherClient(owners[id])} {
			v := readOne(whole, c, base, keys[client], id, patience)
			v.Client, v.Owner = client, client == owners[id]
			l.mu.Lock()
			l.views = append(l.views, v)
			l.mu.Unlock()
		}
	}
}

// readBackTransport carries the read-back's requests: nil is net/http's
// default; a test on virtual time gives one over a network in memory.
var readBackTransport http.RoundTripper

// readOne asks GetOrder for one order as one client until an answer that is
// not 503, or patience runs out (the last answer stands). A read that
// whole's end cuts before any answer is marked Undone.
func readOne(whole context.Context, c *http.Client, base, functionKey, id string, patience time.Duration) orderView {
	v := orderView{OrderID: id, Undone: whole.Err() != nil}
	if v.Undone {
		return v
	}
	ctx, cancel := context.WithTimeout(whole, patience)
	defer cancel()
	faults.WaitFor(ctx, func() bool {
		got := getOrder(ctx, c, base, functionKey, id, "")
		if got.Status == 0 && ctx.Err() != nil && v.Status != 0 {
			return false // cut by the patience: the last answer stands
		}
		v = got
		return v.Status != 0 && v.Status != http.StatusServiceUnavailable
	})
	v.Undone = v.Status == 0 && whole.Err() != nil
	return v
}

// otherClient is the traffic's other client.
func otherClient(client string) string {
	if client == orderstream.ClientA {
		return orderstream.ClientB
	}
	return orderstream.ClientA
}

// Views returns what ReadBack got.
func (l *SubmitLedger) Views() []orderView {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.views)
}

// answeredOrders maps the orderIds answered 2xx for their own payload to
// the client they were answered to.
func answeredOrders(answers []Answer) map[string]string {
	owners := map[string]string{}
	for _, a := range answers {
		if !a.Reuse && a.Status/100 == 2 && !isReceipt(a.Body) {
			owners[a.OrderID] = a.Client
		}
	}
	return owners
}

// getOrder asks GetOrder for order id once, on another instance than avoid
// when set.
func getOrder(ctx context.Context, c *http.Client, base, functionKey, id, avoid string) (v orderView) {
	v = orderView{OrderID: id, Call: time.Now()}
	defer func() { v.Return = time.Now() }()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/api/orders/"+url.PathEscape(id), nil)
	if err != nil {
		v.Err = err.Error()
		return v
	}
	if avoid != "" {
		req.Header.Set(rig.InstanceHeader, "not:"+avoid)
	}
	resp, b, err := call(c, req, functionKey)
	if err != nil {
		v.Err = err.Error()
		return v
	}
	v.Status, v.Body = resp.StatusCode, digest(b)
	var o struct {
		RequestHash string `json:"requestHash"`
		Type        string `json:"type"`
	}
	if err := json.Unmarshal(b, &o); err != nil {
		v.Err = "answer is not JSON: " + err.Error()
	}
	if resp.StatusCode == http.StatusOK {
		v.RequestHash = o.RequestHash
	} else {
		v.ProblemType = o.Type
	}
	return v
}

// readBackCheck checks the views against the stored orders: the owner gets
// 200 with the stored fingerprint, anyone else 404 order-not-found. A view
// whose last answer is 503 is the handler keeping its promise when the
// store did not answer within SUBMIT_DEADLINE (a slow emulator, a loaded
// machine): it is named, not checked; so is a read the read-back's budget
// left undone. It checks nothing when no order was
// read back.
func readBackCheck(views []orderView, stored map[string]*apiOrder) *verify.Check {
	c := &verify.Check{Name: "HTTP: GET answers an order to its owner with the stored fingerprint, 404 to another client (a sample)"}
	unanswered, undone := 0, 0
	for _, v := range views {
		if v.Undone {
			undone++
			continue
		}
		if v.Status == http.StatusServiceUnavailable {
			unanswered++
			continue
		}
		c.Checked++
		o := stored[v.OrderID]
		switch {
		case v.Err != "":
			c.Fail("GET %s as %s: %s", v.OrderID, v.Client, v.Err)
		case v.Status == 0:
			c.Fail("GET %s as %s: no answer", v.OrderID, v.Client)
		case !v.Owner && (v.Status != http.StatusNotFound || !strings.HasSuffix(v.ProblemType, problemNotFound)):
			c.Fail("GET %s as %s, who does not own it: %d %s, want 404 order-not-found", v.OrderID, v.Client, v.Status, v.ProblemType)
		case !v.Owner:
		case v.Status != http.StatusOK:
			c.Fail("GET %s as its owner %s: %d %s", v.OrderID, v.Client, v.Status, v.ProblemType)
		case o == nil || o.orders == 0:
			c.Fail("GET %s: 200, but no order document is stored", v.OrderID)
		case v.RequestHash != o.requestHash:
			c.Fail("GET %s: requestHash %s, the stored order's is %s", v.OrderID, v.RequestHash, o.requestHash)
		}
	}
	if unanswered > 0 {
		c.Name += fmt.Sprintf("; %d not checked: answered 503 to the end, the store did not answer within SUBMIT_DEADLINE", unanswered)
	}
	if undone > 0 {
		c.Name += fmt.Sprintf("; %d not read: the read-back's time ran out", undone)
	}
	return c
}

// Traffic is a rig.Config.Traffic that runs the ledger's submissions with
// the clients' keys and then, while the queue is still open, reads back
// ReadBackSample of the orders answered 2xx through GetOrder (ReadBack,
// checked by readBackCheck): make run's and make chaos's HTTP clients.
func (l *SubmitLedger) Traffic(keys map[string]string) func(context.Context, string, func() float64, func() bool) error {
	return func(ctx context.Context, base string, settled func() float64, inOutage func() bool) error {
		if err := submit(ctx, base, keys, l, settled, inOutage); err != nil {
			return err
		}
		l.ReadBack(ctx, base, keys, ReadBackSample, ReadBackPatience, ReadBackBudget)
		return nil
	}
}

// ReadBackSample is how many orders answered 2xx over HTTP are read back
// through GetOrder (twice: as the owner and as the other client);
// ReadBackPatience bounds the read-back of one order by one client, and
// ReadBackBudget the whole read-back, well inside a run's own deadline.
const (
	ReadBackSample   = 20
	ReadBackPatience = time.Minute
	ReadBackBudget   = 2 * ReadBackPatience
)

// MeetOutages starts every tenth submission once an outage is on (or at the
// end of the stream if none comes), so that clients meet SubmitOrder's 503
// and Retry-After and retry through it.
func MeetOutages(subs []orderstream.Submission, outages []faults.Outage) []orderstream.Submission {
	if len(outages) == 0 {
		return subs
	}
	out := slices.Clone(subs)
	for i := 0; i < len(out); i += 10 {
		out[i].DuringOutage, out[i].At = true, 1
	}
	return out
}
