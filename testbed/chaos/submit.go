package chaos

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ordersink/orders-consumer/testbed/faults"
	"github.com/ordersink/orders-consumer/testbed/orderstream"
	"github.com/ordersink/orders-consumer/testbed/rig"
	"golang.org/x/sync/errgroup"
)

// The HTTP traffic of a run: clients posting orders to SubmitOrder with an
// Idempotency-Key and retrying as a careful client does, submitClients at
// once; attemptTimeout bounds one attempt, submitPatience all the attempts
// of one request (past a Cosmos outage).
const (
	submitClients  = 8
	attemptTimeout = 30 * time.Second
	submitPatience = 3 * time.Minute
)

// Answer is one HTTP answer a client got (or its failure to get one).
type Answer struct {
	Client  string
	Key     string
	OrderID string
	// Copy is which of the identical requests sent at once it answers (0
	// for a single one); Attempt counts from 1; Reuse marks the request
	// with the other payload; Hash is the payload's fingerprint
	// (orderstream.ContentKey).
	Copy, Attempt int
	Reuse         bool
	Hash          string
	Status        int // 0: no answer (timeout, connection error)
	Err           string
	Replayed      bool
	Location      string
	Body          string
	ProblemType   string
	// Call and Return are when the request was sent and when its answer
	// (or its failure) came, for the history check; Instance is the app
	// instance that answered (rig.InstanceHeader).
	Call, Return time.Time
	Instance     string
}

// ClientKeys are the function keys of the HTTP traffic's two clients,
// name -> value: a run's HTTP listener requires them
// (rig.Config.FunctionKeys), so that each client is its own scope.
var ClientKeys = map[string]string{orderstream.ClientA: "chaos-partner-a-key", orderstream.ClientB: "chaos-partner-b-key"}

// SubmitLedger is every answer of a run's HTTP traffic.
type SubmitLedger struct {
	mu      sync.Mutex
	answers []Answer
	subs    []orderstream.Submission
	views   []orderView // ReadBack's
	// probes are the GETs clients make during the traffic: after a final
	// 2xx (read your write) and before retrying a request without answer
	// (docs/http-api.md, client retry rule 5).
	probes []orderView
}

// NewSubmitLedger prepares the ledger of subs.
func NewSubmitLedger(subs []orderstream.Submission) *SubmitLedger {
	return &SubmitLedger{subs: subs}
}

// submissions are the ledger's submissions with their rivals.
func (l *SubmitLedger) submissions() []orderstream.Submission {
	all := slices.Clone(l.subs)
	for _, s := range l.subs {
		if s.Rival != nil {
			all = append(all, *s.Rival)
		}
	}
	return all
}

// Answers returns every answer in the order they came.
func (l *SubmitLedger) Answers() []Answer {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.answers)
}

func (l *SubmitLedger) book(a Answer) {
	l.mu.Lock()
	l.answers = append(l.answers, a)
	l.mu.Unlock()
}

// submit runs the ledger's submissions against base (the listener's URL),
// each once progress() reaches its At (or, for those asking, once
// inOutage() says Cosmos is in an outage), until all are answered or ctx
// ends. keys are the clients' function keys, name -> value
// (orderstream.Submission.Client names one); a client without one sends
// none.
func submit(ctx context.Context, base string, keys map[string]string, l *SubmitLedger, progress func() float64, inOutage func() bool) error {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = 4 * submitClients
	c := &client{base: base, keys: keys, ledger: l, http: &http.Client{Transport: t}}
	defer t.CloseIdleConnections()
	var clients errgroup.Group
	clients.SetLimit(submitClients)
	// In the order they come due: one due late must not hold back those
	// due before it. Those waiting for an outage go in a line of their own.
	subs := slices.Clone(l.subs)
	slices.SortStableFunc(subs, func(a, b orderstream.Submission) int { return cmp.Compare(a.At, b.At) })
	outage := slices.DeleteFunc(slices.Clone(subs), func(s orderstream.Submission) bool { return !s.DuringOutage })
	subs = slices.DeleteFunc(subs, func(s orderstream.Submission) bool { return s.DuringOutage })
	line := func(subs []orderstream.Submission) {
		for _, s := range subs {
			if !faults.WaitFor(ctx, func() bool { return progress() >= s.At || s.DuringOutage && inOutage() }) {
				return
			}
			clients.Go(func() error {
				// Go waits for a free client without watching ctx: a
				// submission whose turn came after the end is not sent.
				if ctx.Err() == nil {
					c.submission(ctx, s)
				}
				return nil
			})
		}
	}
	var lines sync.WaitGroup
	lines.Go(func() { line(outage) })
	line(subs)
	lines.Wait()
	_ = clients.Wait() // a submission has no error: its answers are booked
	return ctx.Err()
}

type client struct {
	base   string
	keys   map[string]string
	ledger *SubmitLedger
	http   *http.Client
}

// submission sends the copies of one key and the rival's request at once,
// then, when it asks, the key again with the other payload. An impatient
// client (one that gives up on its first attempt) first looks whether the
// order is there.
func (c *client) submission(ctx context.Context, s orderstream.Submission) {
	if s.FirstTimeout > 0 {
		c.probe(ctx, s.Client, s.OrderID, "")
	}
	var wg sync.WaitGroup
	release := make(chan struct{})
	for i := range max(s.Copies, 1) {
		wg.Go(func() {
			<-release
			c.request(ctx, s, i, s.Body, false)
		})
	}
	if r := s.Rival; r != nil {
		wg.Go(func() {
			<-release
			c.request(ctx, *r, 0, r.Body, false)
		})
	}
	close(release)
	wg.Wait()
	if s.Reuse != nil {
		c.request(ctx, s, 0, s.Reuse, true)
	}
}

// request retries one request as a careful client: the same key and body
// again after a timeout, a 409 in flight, a 500 or a 503, waiting as
// Retry-After asks (at most a second), until a final answer or submitPatience.
func (c *client) request(ctx context.Context, s orderstream.Submission, copyNo int, body []byte, reuse bool) {
	deadline, hash := time.Now().Add(submitPatience), orderstream.ContentKey(body)
	for attempt := 1; ; attempt++ {
		timeout := attemptTimeout
		if attempt == 1 && s.FirstTimeout > 0 {
			timeout = s.FirstTimeout
		}
		a := c.post(ctx, s, body, timeout)
		a.Copy, a.Attempt, a.Reuse, a.Hash = copyNo, attempt, reuse, hash
		c.ledger.book(a)
		if a.Status == 0 || a.Status/100 == 2 && !reuse {
			c.probe(ctx, s.Client, s.OrderID, a.Instance) // on another instance
		}
		wait, again := retryAfter(a)
		if !again || time.Now().Add(wait).After(deadline) {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
	}
}

// retryAfter says whether a client retries after a, and after how long: a
// 409 order-id-taken is final, a 409 in flight is not.
func retryAfter(a Answer) (time.Duration, bool) {
	switch {
	case final(a):
		return 0, false
	case a.Status == 0, a.Status == http.StatusInternalServerError:
		return 100 * time.Millisecond, true
	case a.Status == http.StatusConflict, a.Status == http.StatusServiceUnavailable:
		return time.Second, true
	}
	return 0, false
}

func (c *client) post(ctx context.Context, s orderstream.Submission, body []byte, timeout time.Duration) (a Answer) {
	a = Answer{Client: s.Client, Key: s.Key, OrderID: s.OrderID, Call: time.Now()}
	defer func() { a.Return = time.Now() }()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+"/api/orders", bytes.NewReader(body))
	if err != nil {
		a.Err = err.Error()
		return a
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", s.Key)
	resp, b, err := call(c.http, req, c.keys[s.Client])
	if err != nil {
		a.Err = err.Error()
		return a
	}
	a.Status, a.Body, a.Instance = resp.StatusCode, string(b), resp.Header.Get(rig.InstanceHeader)
	a.Replayed = strings.EqualFold(resp.Header.Get("Idempotent-Replayed"), "true")
	a.Location = resp.Header.Get("Location")
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/problem+json") {
		var p struct {
			Type string `json:"type"`
		}
		_ = json.Unmarshal(b, &p)
		a.ProblemType = p.Type
	}
	return a
}

// call sends req to a function, with the function key in x-functions-key
// when set, and reads the answer's body (at most 1 MiB). The body is closed.
func call(c *http.Client, req *http.Request, functionKey string) (*http.Response, []byte, error) {
	if functionKey != "" {
		req.Header.Set("x-functions-key", functionKey)
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp, b, err
}

// SubmitCounts sums up a run's HTTP traffic for the summary.
type SubmitCounts struct {
	Keys, Requests int
	ByStatus       map[int]int
	Replays        int // answers marked Idempotent-Replayed
	NoAnswer       int
}

// Counts returns the traffic's figures.
func (l *SubmitLedger) Counts() SubmitCounts {
	l.mu.Lock()
	defer l.mu.Unlock()
	c := SubmitCounts{Keys: len(l.submissions()), Requests: len(l.answers), ByStatus: map[int]int{}}
	for _, a := range l.answers {
		if a.Status == 0 {
			c.NoAnswer++
			continue
		}
		c.ByStatus[a.Status]++
		if a.Replayed {
			c.Replays++
		}
	}
	return c
}

func (c SubmitCounts) String() string {
	var parts []string
	for _, s := range slices.Sorted(maps.Keys(c.ByStatus)) {
		parts = append(parts, strconv.Itoa(s)+": "+strconv.Itoa(c.ByStatus[s]))
	}
	return fmt.Sprintf("%d keys, %d requests (%s; %d without an answer), %d replays",
		c.Keys, c.Requests, strings.Join(parts, ", "), c.NoAnswer, c.Replays)
}
