package orderstream

import (
	"cmp"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/ordersink/orders-consumer/handler"
	"github.com/ordersink/orders-consumer/testbed/hostemu"
)

// SubmitOptions shape the orders a stream also submits over HTTP (POST
// /api/orders with an Idempotency-Key, docs/http-api.md), with the faults of
// clients that retry. Rates are fractions of Orders.
type SubmitOptions struct {
	// Orders submitted over HTTP, with orderIds of their own (WEB-…).
	Orders int
	Seed   uint64
	// Timeouts: the client gives up on its first attempt after a few
	// milliseconds and retries with the same key and body, while the first
	// may still run.
	Timeouts float64
	// Concurrent: 2 to ConcurrentSize identical requests with one key at
	// the same moment.
	Concurrent     float64
	ConcurrentSize int
	// Reused: once answered, the key is sent again with another payload
	// (one quantity changed), which must be refused.
	Reused float64
	// NewKeys: the same order submitted again under a new key by the same
	// client, which is answered 200 with the stored order (never a raced
	// order).
	NewKeys float64
	// Races: another client (ClientB) submits the same orderId with other
	// content at the same moment: one of the two gets 201, the other 409
	// order-id-taken.
	Races float64
	// Fallbacks: orders the client first put on the queue, then posts
	// unchanged (WithFallbacks adds the queue's copy to the stream): one
	// order either way, the API answering 201 or its 200 receipt.
	Fallbacks float64
	// Edge: orders whose OrderAccepted event is exactly at the size budget
	// of a MaxMessageBytes message (0: handler.DefaultMaxMessageBytes),
	// their first attempt given up on: every retry must be answered as the
	// first request was, whenever it comes.
	Edge            float64
	MaxMessageBytes int
}

// The function key names of the two clients of the HTTP traffic: every
// submission is ClientA's but the rivals of Races.
const (
	ClientA = "partner-a"
	ClientB = "partner-b"
)

// DefaultSubmitOptions are the submissions `make run` mixes into its stream.
func DefaultSubmitOptions() SubmitOptions {
	return SubmitOptions{Orders: 200, Seed: 1, Timeouts: 0.1, Concurrent: 0.05, ConcurrentSize: 8, Reused: 0.05,
		NewKeys: 0.05, Races: 0.05, Fallbacks: 0.05, Edge: 0.02}
}

// RegisterFlags registers the options as -http-… flags (make run's and
// make chaos's), with o's values as defaults. The seed is the stream's.
func (o *SubmitOptions) RegisterFlags(fs *flag.FlagSet) {
	fs.IntVar(&o.Orders, "http-orders", o.Orders, "orders also submitted to SubmitOrder over HTTP while the stream runs (0: none)")
	fs.Float64Var(&o.Timeouts, "http-timeouts", o.Timeouts, "HTTP submissions whose first attempt the client gives up on after a few ms, as a fraction")
	fs.Float64Var(&o.Concurrent, "http-concurrent", o.Concurrent, "HTTP submissions sent as up to -http-concurrent-size identical requests at once, as a fraction")
	fs.IntVar(&o.ConcurrentSize, "http-concurrent-size", o.ConcurrentSize, "most identical requests at once with one Idempotency-Key")
	fs.Float64Var(&o.Reused, "http-reused", o.Reused, "HTTP keys sent again with another payload, as a fraction")
	fs.Float64Var(&o.NewKeys, "http-new-keys", o.NewKeys, "HTTP orders submitted again under a new key, as a fraction")
	fs.Float64Var(&o.Races, "http-races", o.Races, "HTTP orders another client submits at the same moment with other content, as a fraction")
	fs.Float64Var(&o.Fallbacks, "http-fallbacks", o.Fallbacks, "HTTP orders first put on the queue by their client, as a fraction")
	fs.Float64Var(&o.Edge, "http-edge", o.Edge, "HTTP orders whose OrderAccepted event is exactly at its size budget, as a fraction")
}

// Submission is one Idempotency-Key's requests.
type Submission struct {
	// Client is the name of the function key the requests present.
	Client  string
	Key     string
	OrderID string
	Body    []byte
	// Copies are the identical requests sent at once (at least 1).
	Copies int
	// FirstTimeout, when set, is how long the client waits for its first
	// attempt before it gives up and retries.
	FirstTimeout time.Duration
	// Reuse, when set, is another payload sent with Key after the answer.
	Reuse []byte
	// Rival, when set, is another client's submission of OrderID with
	// other content, sent at the same moment as this one.
	Rival *Submission
	// At is the share of the queue stream settled (0 to 1) when the
	// submission starts: HTTP and queue traffic interleave.
	At float64
	// DuringOutage starts the submission as soon as Cosmos is in an outage,
	// if one comes before At.
	DuringOutage bool
	// Fallback: the client put this order on the queue first
	// (SubmitOptions.Fallbacks); Edge: its event is at its size budget.
	Fallback, Edge bool
}

// SubmitInjected counts what the submissions hold on purpose.
type SubmitInjected struct {
	Orders, Keys, Timeouts, Concurrent, ConcurrentCopies, Reused, NewKeys, Races, Fallbacks, Edge int
}

// GenerateSubmissions builds the HTTP submissions; the same options give the
// same submissions.
func GenerateSubmissions(opts SubmitOptions) ([]Submission, SubmitInjected, error) {
	var in SubmitInjected
	if opts.Orders < 0 || opts.Orders > 100_000 {
		return nil, in, fmt.Errorf("HTTP orders must be from 0 to 100000, got %d", opts.Orders)
	}
	for name, r := range map[string]float64{"timeouts": opts.Timeouts, "concurrent": opts.Concurrent, "reused": opts.Reused,
		"new keys": opts.NewKeys, "races": opts.Races, "fallbacks": opts.Fallbacks, "edge": opts.Edge} {
		if r < 0 || r > 1 {
			return nil, in, fmt.Errorf("%s rate must be from 0 to 1, got %g", name, r)
		}
	}
	if opts.Orders == 0 {
		return nil, in, nil
	}
	opts.ConcurrentSize = max(opts.ConcurrentSize, 2)
	g := &generator{rng: rand.New(rand.NewPCG(opts.Seed^0x5ab517, opts.Seed^0xc0ffee))}
	n := opts.Orders
	subs := make([]Submission, n)
	for i := range n {
		o := g.order(2_000_000 + i)
		o.OrderID = fmt.Sprintf("WEB-2026-%06d", i+1)
		o.Meta.Producer = "web-shop"
		body, _ := json.Marshal(o) // plain strings and ints always marshal
		subs[i] = Submission{Client: ClientA, Key: g.key(), OrderID: o.OrderID, Body: body, Copies: 1, At: g.rng.Float64()}
	}
	for _, i := range g.pick(n, opts.Edge) {
		body, err := edgeBody(subs[i].Body, cmp.Or(opts.MaxMessageBytes, handler.DefaultMaxMessageBytes))
		if err != nil {
			return nil, in, fmt.Errorf("order at the event size edge: %w", err)
		}
		subs[i].Body, subs[i].Edge = body, true
		subs[i].FirstTimeout = time.Duration(1+g.rng.IntN(20)) * time.Millisecond
		in.Edge++
	}
	for _, i := range g.pick(n, opts.Timeouts) {
		subs[i].FirstTimeout = time.Duration(1+g.rng.IntN(20)) * time.Millisecond
		in.Timeouts++
	}
	for _, i := range g.pick(n, opts.Concurrent) {
		subs[i].Copies = 2 + g.rng.IntN(opts.ConcurrentSize-1)
		in.Concurrent++
		in.ConcurrentCopies += subs[i].Copies
	}
	for _, i := range g.pick(n, opts.Reused) {
		var o order
		_ = json.Unmarshal(subs[i].Body, &o)
		subs[i].Reuse, _ = json.Marshal(g.mutate(&o))
		in.Reused++
	}
	for _, i := range g.pick(n, opts.Races) {
		var o order
		_ = json.Unmarshal(subs[i].Body, &o)
		rival := Submission{Client: ClientB, Key: g.key(), OrderID: subs[i].OrderID, Copies: 1, At: subs[i].At}
		rival.Body, _ = json.Marshal(g.mutate(&o))
		subs[i].Rival = &rival
		in.Races++
	}
	for _, i := range g.pick(n, opts.Fallbacks) {
		if subs[i].Rival == nil && subs[i].Reuse == nil && !subs[i].Edge { // an edge order is too large for a queue message
			subs[i].Fallback = true
			in.Fallbacks++
		}
	}
	// Not a raced order: its resend could reach the API before the race,
	// and the client's 200 there would be right but no race (soak seed
	// 698217, whose race was moved into an outage after its resend).
	for _, i := range g.pickWhere(n, opts.NewKeys, func(i int) bool { return subs[i].Rival == nil }) {
		again := subs[i]
		again.Key, again.Copies, again.FirstTimeout, again.Reuse, again.Rival, again.Fallback = g.key(), 1, 0, nil, nil, false
		again.At = min(1, again.At+g.rng.Float64()/4)
		subs = append(subs, again)
		in.NewKeys++
	}
	in.Orders, in.Keys = n, len(subs)+in.Races
	return subs, in, nil
}

// key is an Idempotency-Key as clients make them: a random UUID.
func (g *generator) key() string {
	b := make([]byte, 16)
	for i := range b {
		b[i] = byte(g.rng.UintN(256))
	}
	b[6], b[8] = b[6]&0x0f|0x40, b[8]&0x3f|0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// Unwrap returns the message a requeued message stands for
// (docs/contract.md §7: a batch's requeue, handler.Requeued): the original
// body, messageId and subject, which is what the consumer reads. ok is
// false for any other message.
func Unwrap(m *hostemu.Message) (_ *hostemu.Message, ok bool) {
	q, body, ok := handler.UnwrapRequeued(m.Body)
	if !ok || q.MessageID == "" { // every requeue the handler writes names its message
		return nil, false
	}
	u := *m
	u.Body, u.MessageID, u.Subject = body, q.MessageID, q.Subject
	return &u, true
}
