// Package orderstream makes the message streams the host emulator delivers:
// realistic order messages (docs/contract.md §3) with the faults of at-least-once
// delivery mixed in, read from or written to JSONL.
package orderstream

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ordersink/orders-consumer/orders"
	"github.com/ordersink/orders-consumer/producer"
	"github.com/ordersink/orders-consumer/testbed/hostemu"
)

// Options shape a generated stream. Rates are fractions of Orders.
type Options struct {
	Orders int
	Seed   uint64
	// Duplicates: extra sends of an order by its producer (a retry after a
	// timeout): same orderId and content, sent again later, sometimes with
	// a new meta or re-serialised with other key order and white space.
	Duplicates float64
	// Bursts: orders sent as 2 to BurstSize copies that are in flight at
	// the same moment.
	Bursts    float64
	BurstSize int
	// Mismatches: orders that get a second message with the same orderId
	// and different content (another quantity, so another total). It may
	// come before the original, after it, or race it in a burst.
	Mismatches float64
	// Invalid: extra messages that break docs/contract.md §3 (or are not JSON).
	Invalid float64
	// LostCompletions: messages whose first successful completion the
	// broker drops, so they are delivered again.
	LostCompletions float64
}

// DefaultOptions is the stream `make run` uses.
func DefaultOptions() Options {
	return Options{Orders: 2000, Seed: 1, Duplicates: 0.20, Bursts: 0.02, BurstSize: 4,
		Mismatches: 0.01, Invalid: 0.005, LostCompletions: 0.02}
}

// Injected counts what a generated stream holds on purpose.
type Injected struct {
	Orders, Duplicates, Bursts, BurstCopies, Mismatches, Invalid, LostCompletions int
}

// Stream is the messages in send order and what was injected.
type Stream struct {
	Messages []*hostemu.Message
	Injected Injected
}

type order struct {
	OrderID    string `json:"orderId"`
	CustomerID string `json:"customerId"`
	Currency   string `json:"currency"`
	Lines      []line `json:"lines"`
	Total      string `json:"total"`
	PlacedAt   string `json:"placedAt"`
	Meta       meta   `json:"meta"`
}

type line struct {
	SKU       string `json:"sku"`
	Quantity  int    `json:"quantity"`
	UnitPrice string `json:"unitPrice"`
}

type meta struct {
	SentAt   string `json:"sentAt"`
	Producer string `json:"producer"`
	TraceID  string `json:"traceId"`
	Attempt  int    `json:"attempt,omitempty"`
}

// placed is a message with its place in the send order; messages at one
// place go in the order they were added.
type placed struct {
	pos float64
	msg *hostemu.Message
}

// epoch anchors generated timestamps, so a seed always gives the same bytes.
var epoch = time.Date(2026, 11, 29, 8, 0, 0, 0, time.UTC)

// Generate builds a stream from opts; the same options give the same stream.
func Generate(opts Options) (*Stream, error) {
	if opts.Orders < 1 || opts.Orders > 1_000_000 {
		return nil, fmt.Errorf("orders must be from 1 to 1000000, got %d", opts.Orders)
	}
	for name, r := range map[string]float64{"duplicates": opts.Duplicates, "bursts": opts.Bursts,
		"mismatches": opts.Mismatches, "invalid": opts.Invalid, "lost completions": opts.LostCompletions} {
		if r < 0 || r > 1 {
			return nil, fmt.Errorf("%s rate must be from 0 to 1, got %g", name, r)
		}
	}
	opts.BurstSize = max(opts.BurstSize, 2)
	g := &generator{rng: rand.New(rand.NewPCG(opts.Seed, opts.Seed^0x9e3779b97f4a7c15)), window: max(40, float64(opts.Orders)/20)}
	s := &Stream{}
	n := opts.Orders
	orders := make([]*order, n)
	for i := range n {
		orders[i] = g.order(i)
		g.add(float64(i), g.message(orders[i], 0))
	}
	s.Injected.Orders = n

	bursts := g.pick(n, opts.Bursts)
	for _, i := range bursts {
		id := g.newBurst()
		g.out[i].msg.Burst = id
		copies := 1 + g.rng.IntN(opts.BurstSize-1)
		for range copies {
			g.add(float64(i), g.message(orders[i], id))
		}
		s.Injected.Bursts++
		s.Injected.BurstCopies += copies
	}
	for range count(n, opts.Duplicates) {
		i := g.rng.IntN(n)
		g.add(float64(i)+0.5+g.rng.Float64()*g.window, g.duplicate(orders[i]))
		s.Injected.Duplicates++
	}
	for _, i := range g.pick(n, opts.Mismatches) {
		changed := g.mutate(orders[i])
		switch r := g.rng.Float64(); {
		case r < 0.25: // races the original
			id := g.out[i].msg.Burst
			if id == 0 {
				id = g.newBurst()
				g.out[i].msg.Burst = id
			}
			g.add(float64(i), g.message(changed, id))
		case r < 0.5: // arrives first: the original becomes the mismatch
			g.add(float64(i)-0.5-g.rng.Float64()*g.window/4, g.message(changed, 0))
		default:
			g.add(float64(i)+0.5+g.rng.Float64()*g.window, g.message(changed, 0))
		}
		s.Injected.Mismatches++
	}
	for k := range count(n, opts.Invalid) {
		g.add(g.rng.Float64()*float64(n), g.invalid(k))
		s.Injected.Invalid++
	}
	slices.SortStableFunc(g.out, func(a, b *placed) int { return cmp.Compare(a.pos, b.pos) })
	for _, p := range g.out {
		if g.rng.Float64() < opts.LostCompletions {
			p.msg.LoseCompletions = 1
			s.Injected.LostCompletions++
		}
		s.Messages = append(s.Messages, p.msg)
	}
	return s, nil
}

// count is round(n*rate), at least 1 when the rate is not zero.
func count(n int, rate float64) int {
	if rate <= 0 {
		return 0
	}
	return max(1, int(float64(n)*rate+0.5))
}

type generator struct {
	rng    *rand.Rand
	out    []*placed
	bursts int
	window float64
}

func (g *generator) add(pos float64, m *hostemu.Message) {
	g.out = append(g.out, &placed{pos: pos, msg: m})
}

func (g *generator) newBurst() int { g.bursts++; return g.bursts }

// pick chooses count(n, rate) distinct orders.
func (g *generator) pick(n int, rate float64) []int {
	return g.pickWhere(n, rate, func(int) bool { return true })
}

// pickWhere is pick among the indices ok accepts (as many as there are,
// up to the rate's count of n).
func (g *generator) pickWhere(n int, rate float64, ok func(int) bool) []int {
	k := min(count(n, rate), n)
	var picked []int
	for _, i := range g.rng.Perm(n) {
		if len(picked) == k {
			break
		}
		if ok(i) {
			picked = append(picked, i)
		}
	}
	return picked
}

var (
	currencies = []string{"EUR", "EUR", "EUR", "USD", "USD", "GBP", "CHF", "SEK"}
	producers  = []string{"web-shop", "web-shop", "mobile-app", "pos"}
	tenants    = []string{"contoso", "fabrikam", "northwind"}
)

func (g *generator) order(i int) *order {
	o := &order{
		OrderID:    fmt.Sprintf("ORD-2026-%06d", i+1),
		CustomerID: fmt.Sprintf("CUST-%d", 1+g.rng.IntN(500)),
		Currency:   currencies[g.rng.IntN(len(currencies))],
	}
	for range 1 + g.rng.IntN(4) {
		var price int64 // in 1/10000
		if g.rng.IntN(20) == 0 {
			price = 1 + g.rng.Int64N(99_9999) // priced by weight: four decimals
		} else {
			price = (50 + g.rng.Int64N(19950)) * 100
		}
		qty := 1 + g.rng.IntN(3)
		if g.rng.IntN(10) == 0 {
			qty = 1 + g.rng.IntN(50)
		}
		o.Lines = append(o.Lines, line{SKU: fmt.Sprintf("SKU-%d", 1+g.rng.IntN(300)), Quantity: qty, UnitPrice: money(price)})
	}
	o.Total = total(o.Lines)
	placedAt := epoch.Add(time.Duration(i)*1500*time.Millisecond + time.Duration(g.rng.IntN(1000))*time.Millisecond)
	o.PlacedAt = placedAt.Format(time.RFC3339)
	o.Meta = meta{
		SentAt:   placedAt.Add(time.Duration(200+g.rng.IntN(800)) * time.Millisecond).Format("2006-01-02T15:04:05.000Z07:00"),
		Producer: producers[g.rng.IntN(len(producers))],
		TraceID:  fmt.Sprintf("%016x%016x", g.rng.Uint64(), g.rng.Uint64()),
	}
	return o
}

// message is the Service Bus message a producer sends for o.
func (g *generator) message(o *order, burst int) *hostemu.Message {
	body, _ := json.Marshal(o) // plain strings and ints always marshal
	return g.envelope(o, body, burst)
}

// envelope sets the MessageId by the producer rule (docs/contract.md §3), so
// a queue with duplicate detection drops exact resends and lets other content
// under the same orderId through to be parked.
func (g *generator) envelope(o *order, body []byte, burst int) *hostemu.Message {
	props, _ := json.Marshal(map[string]any{"tenant": tenants[len(o.CustomerID)%len(tenants)], "schemaVersion": 1, "source": o.Meta.Producer})
	m := &hostemu.Message{Body: body, MessageID: producer.MessageID(o.OrderID, body), ContentType: "application/json",
		ApplicationProperties: props, Burst: burst}
	// Producers name the message type in the Subject; older ones send
	// orders without one, which means the same.
	if g.rng.IntN(5) > 0 {
		m.Subject = "OrderPlaced"
	}
	if g.rng.IntN(2) == 0 {
		m.CorrelationID = o.Meta.TraceID
	}
	return m
}

// duplicate is a producer retry: the same bytes, a new meta, or the same
// content re-serialised by another library (key order, indentation).
func (g *generator) duplicate(o *order) *hostemu.Message {
	switch g.rng.IntN(3) {
	case 0:
		return g.message(o, 0)
	case 1:
		again := *o
		again.Meta.Attempt = 2 + g.rng.IntN(2)
		sent, _ := time.Parse(time.RFC3339, again.Meta.SentAt)
		again.Meta.SentAt = sent.Add(time.Duration(5+g.rng.IntN(30)) * time.Second).UTC().Format("2006-01-02T15:04:05.000Z07:00")
		return g.message(&again, 0)
	default:
		var fields map[string]any
		b, _ := json.Marshal(o)
		_ = json.Unmarshal(b, &fields)
		// map keys marshal sorted: a different order from the struct's.
		body, _ := json.MarshalIndent(fields, "", "  ")
		return g.envelope(o, body, 0)
	}
}

// mutate returns o with one line's quantity changed, total recomputed: a
// valid order with the same orderId and other content.
func (g *generator) mutate(o *order) *order {
	c := *o
	c.Lines = append([]line(nil), o.Lines...)
	i := g.rng.IntN(len(c.Lines))
	if c.Lines[i].Quantity < orders.MaxQuantity {
		c.Lines[i].Quantity++
	} else {
		c.Lines[i].Quantity--
	}
	c.Total = total(c.Lines)
	c.Meta.TraceID = fmt.Sprintf("%016x%016x", g.rng.Uint64(), g.rng.Uint64())
	return &c
}

// invalidKinds are the ways a generated message breaks docs/contract.md §3.
var invalidKinds = []string{"total", "numberMoney", "noCustomer", "notJSON", "reservedTTL", "noLines", "currency", "orderIdSlash",
	"envelopeOverLimit"}

func (g *generator) invalid(k int) *hostemu.Message {
	o := g.order(1_000_000 + k)
	o.OrderID = fmt.Sprintf("BAD-2026-%06d", k+1)
	body, _ := json.Marshal(o)
	var fields map[string]any
	_ = json.Unmarshal(body, &fields)
	switch invalidKinds[k%len(invalidKinds)] {
	case "total":
		fields["total"] = "0.01"
	case "numberMoney":
		fields["lines"].([]any)[0].(map[string]any)["unitPrice"] = 19.99
	case "noCustomer":
		delete(fields, "customerId")
	case "notJSON":
		cut := strings.Index(string(body), `"lines"`)
		return g.envelope(o, body[:cut+len(`"lines":[`)], 0)
	case "reservedTTL":
		// A member the stored document reserves (it would expire the order).
		fields["ttl"] = 60
	case "noLines":
		fields["lines"] = []any{}
		fields["total"] = "0.00"
	case "currency":
		fields["currency"] = strings.ToLower(o.Currency)
	case "orderIdSlash":
		// "/" breaks Cosmos resource paths.
		fields["orderId"] = strings.Replace(o.OrderID, "-", "/", 1)
	case "envelopeOverLimit":
		// ~200 KB of characters JSON escapes: the message fits the queue,
		// its parking envelope would not (its body goes to Cosmos DB).
		delete(fields, "customerId")
		fields["note"] = strings.Repeat(`"\`, 50<<10)
	}
	body, _ = json.Marshal(fields)
	return g.envelope(o, body, 0)
}

// money formats an amount in 1/10000 as a decimal string: two fraction
// digits, or up to four when they are needed.
func money(v int64) string {
	s := strconv.FormatInt(v/10000, 10) + "." + fmt.Sprintf("%04d", v%10000)
	if strings.HasSuffix(s, "00") {
		return s[:len(s)-2]
	}
	return strings.TrimRight(s, "0")
}

func total(lines []line) string {
	var sum int64
	for _, l := range lines {
		p, _ := parseMoney(l.UnitPrice)
		sum += p * int64(l.Quantity)
	}
	return money(sum)
}

func parseMoney(s string) (int64, error) {
	whole, frac, _ := strings.Cut(s, ".")
	frac = (frac + "0000")[:4]
	return strconv.ParseInt(whole+frac, 10, 64)
}
