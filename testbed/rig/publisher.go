package rig

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ordersink/orders-consumer/testbed/hostemu"
	"github.com/ordersink/orders-consumer/testbed/orderstream"
)

// catchUpBound bounds the wait, once the queue is drained, for the outbox
// publisher to deliver every change: a few feed polls and the first retry
// delays of the publisher's policy; with several instances, a crashed
// one's lease expiring and a loaded emulator scanning the container for
// each range's poll (make soak once needed more than 2 minutes).
const catchUpBound = 4 * time.Minute

// LateOrder is the valid orderId whose first message comes last in msgs:
// its partition is written late in a run, after a poison document written
// at the start.
func LateOrder(msgs []*hostemu.Message) string {
	seen := map[string]bool{}
	last := ""
	for _, m := range msgs {
		if c := orderstream.Classify(m); c.Valid && !seen[c.OrderID] {
			seen[c.OrderID], last = true, c.OrderID
		}
	}
	return last
}

// topicMessage is one message the publisher sent to the topic.
type topicMessage struct {
	EventID, OrderID, EventType, RequestHash string
	Invocation                               string
	// OrderStored: the order's document was in Cosmos when the message was
	// sent (read then, directly from Cosmos).
	OrderStored bool
	Sent        time.Time
}

// SetAside is a parking envelope the publisher sent for a document it
// cannot publish (docs/contract.md §6, §10).
type SetAside struct {
	Reason    string `json:"reason"`
	OrderID   string `json:"orderId"`
	MessageID string `json:"messageId"`
}

// PublisherResult is what the publisher did during a delivery.
type PublisherResult struct {
	Policy string
	Stats  hostemu.ChangeFeedStats
	Topic  []topicMessage
	// Refused is how many topic sends the run refused; SetAside the
	// parking envelopes the publisher sent (documents it cannot publish).
	Refused  int
	SetAside []SetAside
	// Poison is the eventId of the poison document written, if any.
	Poison string
	// CaughtUp is nil when the feed delivered every change before the end.
	CaughtUp error
}

// publisher is the outbox publisher of one delivery.
type publisher struct {
	cfg     *Config
	fn      *hostemu.Function
	topic   string
	parking string
	orders  *hostemu.CosmosContainer
	leases  *hostemu.CosmosContainer
	prefix  string // of the lease ids
	file    *os.File

	mu       sync.Mutex
	runErr   error // why a trigger stopped on its own
	feeds    []*hostemu.ChangeFeed
	kills    int // publisher kills made so far
	res      PublisherResult
	stored   map[string]bool // orderIds read back as stored
	sends    map[string]int  // invocation -> topic sends so far
	invOrder map[string]int  // invocation -> its number among those that sent to the topic
	refuse   map[string]bool // invocations whose second (or only) send is refused
}

// newPublisher prepares the publisher of cfg's app, when the rig asks for
// one and the app has an enabled cosmosDBTrigger function; its output hooks
// (sendFault, serviceBusOut) see and fault the topic.
func newPublisher(ctx context.Context, rc *Config, endpoint, key string) (*publisher, error) {
	if !rc.Publisher {
		return nil, nil
	}
	var fn *hostemu.Function
	for _, f := range rc.App.Functions {
		if t := f.Trigger(); strings.EqualFold(t.Type, "cosmosDBTrigger") && !f.Disabled && !rc.Settings.FunctionDisabled(f.Name) {
			fn = f
		}
	}
	if fn == nil {
		return nil, nil
	}
	p := &publisher{cfg: rc, fn: fn, stored: map[string]bool{}, sends: map[string]int{}, invOrder: map[string]int{}, refuse: map[string]bool{}}
	for _, b := range fn.Outputs() {
		if b.TopicName != "" {
			p.topic = b.TopicName
		} else if b.QueueName != "" {
			p.parking = b.QueueName
		}
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	var err error
	if p.orders, p.leases, p.prefix, err = hostemu.TriggerContainers(ctx, fn, rc.Settings, endpoint, key); err != nil {
		return nil, err
	}
	if p.cfg.TopicFile != "" {
		if err := os.MkdirAll(filepath.Dir(p.cfg.TopicFile), 0o755); err != nil {
			return nil, err
		}
		if p.file, err = os.Create(p.cfg.TopicFile); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// feedOn is the trigger of one instance, on its host and handler. With
// several instances the container's feed is read in feedRanges ranges
// whose leases they share on scaled clocks, as the change feed processor
// balances them.
func (p *publisher) feedOn(host *hostemu.Host, worker *hostemu.Worker, log func(string)) (*hostemu.ChangeFeed, error) {
	cfg := hostemu.ChangeFeedConfig{Monitored: p.orders, Leases: p.leases, LeasePrefix: p.prefix,
		Seed: p.cfg.PublisherSeed, Kill: worker.Kill, Log: log, KillDuring: p.killDuring}
	if p.cfg.Instances > 1 {
		cfg.Ranges, cfg.Clocks = feedRanges, scaledLeaseClocks
	}
	feed, err := host.ChangeFeed(p.fn, cfg)
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.feeds = append(p.feeds, feed)
	p.res.Policy = "none"
	if pol := feed.Policy(); pol != nil {
		p.res.Policy = pol.String()
	}
	return feed, nil
}

// feedRanges and scaledLeaseClocks are the change feed's ranges and lease
// clocks when several instances share it: two ranges (each range polls the
// whole container of the local emulator, whose every query scans it), and
// the processor's 13 s, 17 s and 60 s scaled down three to four times, so
// that a crashed instance's leases are taken over within a run.
const feedRanges = 2

var scaledLeaseClocks = hostemu.LeaseClocks{Acquire: 3 * time.Second, Renew: 5 * time.Second, Expire: 20 * time.Second}

// killDuring kills the handler in the 2nd, 6th, 10th … invocation of an
// instance's trigger while kills are left: the first batch meets a refused
// send, then a kill, then succeeds.
func (p *publisher) killDuring(n int) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.kills < p.cfg.PublisherKills && n%4 == 2 {
		p.kills++
		return true
	}
	return false
}

// run runs one instance's trigger until ctx ends.
func (p *publisher) run(ctx context.Context, feed *hostemu.ChangeFeed, log func(string)) {
	if err := feed.Run(ctx); err != nil {
		log(err.Error())
		p.mu.Lock()
		p.runErr = err
		p.mu.Unlock()
	}
}

// writePoison writes an outbox document without eventType or payload into
// the chosen partition.
func (p *publisher) writePoison(ctx context.Context) error {
	id := p.cfg.PoisonPartition
	if id == "" {
		return nil
	}
	p.res.Poison = id + ":event:Poison"
	doc, _ := json.Marshal(map[string]string{"id": p.res.Poison, "orderId": id, "type": "outboxEvent", "eventId": p.res.Poison})
	if err := p.orders.Create(ctx, id, doc); err != nil {
		return fmt.Errorf("write the poison outbox document: %w", err)
	}
	return nil
}

// catchUp waits until the instances' feeds have delivered every change
// made so far (at most catchUpBound) and books whether they did.
func (p *publisher) catchUp(ctx context.Context) {
	if p == nil {
		return
	}
	p.mu.Lock()
	feeds := slices.Clone(p.feeds)
	p.mu.Unlock()
	drainCtx, cancel := context.WithTimeoutCause(ctx, catchUpBound, fmt.Errorf("not within %s of the queue's end", catchUpBound))
	caughtUp := hostemu.Drain(drainCtx, time.Now(), feeds...)
	cancel()
	p.mu.Lock()
	p.res.CaughtUp = caughtUp
	p.mu.Unlock()
}

// result returns what the publisher did: the feeds' figures and why a
// trigger stopped on its own, taken once the instances have stopped their
// feeds (Fleet.halt), so that an invocation still in flight after the
// catch-up is in them. It closes the topic file.
func (p *publisher) result() *PublisherResult {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	res := p.res
	for _, f := range p.feeds {
		res.Stats = res.Stats.Add(f.Stats())
	}
	res.CaughtUp = cmp.Or(p.runErr, res.CaughtUp)
	p.closeTopic()
	return &res
}

// closeTopic closes the topic file, if still open; p.mu is held.
func (p *publisher) closeTopic() {
	if p.file != nil {
		_ = p.file.Close()
		p.file = nil
	}
}

// sendFault is hostemu.Options.SendFault: it refuses the chosen topic sends.
func (p *publisher) sendFault(inv *hostemu.Invocation, m hostemu.OutputMessage) error {
	if inv.Function != p.fn.Name || m.Entity != p.topic {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.invOrder[inv.ID]; !ok {
		p.invOrder[inv.ID] = len(p.invOrder) + 1
		// The 1st, 5th, 9th … invocation that sends, while faults are left.
		p.refuse[inv.ID] = p.res.Refused < p.cfg.PublisherSendFaults && p.invOrder[inv.ID]%4 == 1
	}
	// The second message when there are several, so one is already on the
	// topic when the invocation fails.
	topical := 0
	for _, o := range inv.Outputs {
		if o.Entity == p.topic {
			topical++
		}
	}
	if !p.refuse[inv.ID] || p.sends[inv.ID] != min(1, topical-1) {
		return nil
	}
	p.refuse[inv.ID] = false
	p.res.Refused++
	return fmt.Errorf("output binding %s: sending to topic %s failed: ServiceBusException (ServiceCommunicationProblem), injected by the run", m.Binding, m.Entity)
}

// serviceBusOut is hostemu.Options.ServiceBusOut: it books what the
// publisher sent (topic messages, with whether their order was stored at
// that moment, and set-aside envelopes), then passes every message on to
// the rig's own hook.
func (p *publisher) serviceBusOut(inv *hostemu.Invocation, m hostemu.OutputMessage) error {
	if inv.Function == p.fn.Name {
		if err := p.book(inv, m); err != nil {
			return err
		}
	}
	if p.cfg.ServiceBusOut != nil {
		return p.cfg.ServiceBusOut(inv, m)
	}
	return nil
}

func (p *publisher) book(inv *hostemu.Invocation, m hostemu.OutputMessage) error {
	switch m.Entity {
	case p.topic:
		var e struct {
			EventID, OrderID, EventType, RequestHash string
		}
		_ = json.Unmarshal([]byte(m.Text), &e)
		tm := topicMessage{EventID: e.EventID, OrderID: e.OrderID, EventType: e.EventType, RequestHash: e.RequestHash, Invocation: inv.ID, Sent: time.Now()}
		stored, err := p.orderStored(e.OrderID)
		if err != nil {
			return err
		}
		tm.OrderStored = stored
		p.mu.Lock()
		defer p.mu.Unlock()
		p.sends[inv.ID]++
		p.res.Topic = append(p.res.Topic, tm)
		if p.file != nil {
			line, _ := json.Marshal(map[string]string{"entity": m.Entity, "function": inv.Function, "invocationId": inv.ID, "contentType": m.ContentType, "body": m.Text})
			if _, err := p.file.Write(append(line, '\n')); err != nil {
				return err
			}
		}
	case p.parking:
		var env SetAside
		_ = json.Unmarshal([]byte(m.Text), &env)
		p.mu.Lock()
		p.res.SetAside = append(p.res.SetAside, env)
		p.mu.Unlock()
	}
	return nil
}

// orderStored reads the order document from Cosmos (directly, not through
// the run's proxy): the answer at the moment of the send.
func (p *publisher) orderStored(orderID string) (bool, error) {
	p.mu.Lock()
	known := p.stored[orderID]
	p.mu.Unlock()
	if known || orderID == "" {
		return known, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	stored, err := p.orders.Exists(ctx, orderID, orderID)
	if err != nil {
		return false, fmt.Errorf("read order %s back: %w", orderID, err)
	}
	if stored {
		p.mu.Lock()
		p.stored[orderID] = true
		p.mu.Unlock()
	}
	return stored, nil
}
