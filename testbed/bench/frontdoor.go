package bench

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/ordersink/orders-consumer/cosmos"
	"github.com/ordersink/orders-consumer/handler"
	"github.com/ordersink/orders-consumer/idempotency"
	"github.com/ordersink/orders-consumer/orders"
	"github.com/ordersink/orders-consumer/testbed/hostemu"
)

// The paths of a request through the HTTP front door (docs/http-api.md), in
// the order a round holds them.
const (
	// PathNoKeys is SubmitOrder over a key store that keeps nothing and
	// makes no request: the admission, the order output and the answer,
	// without what executeOnce costs in Cosmos DB. The baseline.
	PathNoKeys = iota
	PathFirst
	PathReplay
	PathKeyReused
	PathInFlight
	PathGetSubmitted
	PathGetAccepted
	numPaths
)

// FrontDoorPath describes one path: the outcome the handler logs for each
// of its requests and the fewest Cosmos requests the design allows.
type FrontDoorPath struct {
	Name  string
	Want  string
	Floor float64
}

// FrontDoorPaths are the paths, indexed by Path....
var FrontDoorPaths = [numPaths]FrontDoorPath{
	PathNoKeys:       {"first request, key store that keeps nothing (baseline: no executeOnce round trip)", "accepted", 0},
	PathFirst:        {"first request (202)", "accepted", 2},
	PathReplay:       {"replay: same key, same payload (stored 202, `Idempotent-Replayed`)", "replayed", 2},
	PathKeyReused:    {"key reused with another payload (422)", "keyReused", 2},
	PathInFlight:     {"in flight: the key's first request still running (409, `Retry-After`)", "inFlight", 2},
	PathGetSubmitted: {"GET, order submitted, not yet stored by the consumer (200 `submitted`)", "submitted", 2},
	PathGetAccepted:  {"GET, order stored by the consumer (200 `accepted`)", "found", 1},
}

// benchFunctionKey is the function key the bench's caller presents; the
// handler scopes Idempotency-Keys by its hash (docs/http-api.md).
const benchFunctionKey = "bench-partner-function-key"

// benchHost is the app's host name in the requests' URLs.
const benchHost = "orders-bench.azurewebsites.net"

// FrontDoorVariants builds a Variant per path (indexed by Path...), each
// sending host-format invocations of SubmitOrder or GetOrder one at a time
// over loopback HTTP to the handler served in this process, as the
// Functions host does. They write to a database of their own, created here
// beside t's: the local emulators ignore the partition key of a query
// (docs/cosmos-emulators.md) and scan the whole container, so a GET in a
// container the throughput rounds filled would measure that scan. close
// releases their servers and drops the database.
func FrontDoorVariants(t Target) (vs []*Variant, close func(), err error) {
	t.Database += "-fd-" + strings.ToLower(RunID())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := t.Prepare(ctx); err != nil {
		return nil, nil, err
	}
	drop := func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_ = t.Drop(ctx) // best effort: a database left behind holds only bench orders
	}
	keyed, keys, err := frontDoorRig(t, true)
	var plain *Rig
	if err == nil {
		plain, _, err = frontDoorRig(t, false)
	}
	if err != nil {
		drop()
		return nil, nil, err
	}
	vs, close = frontDoorVariants(keyed, plain, keys, drop)
	return vs, close, nil
}

// frontDoorVariants serves the rigs over loopback HTTP and builds the
// paths' variants; close stops the servers and then calls drop.
func frontDoorVariants(keyed, plain *Rig, keys *cosmos.KeyStore, drop func()) ([]*Variant, func()) {
	var vs []*Variant
	srvKeyed, srvPlain := httptest.NewServer(keyed.Handler), httptest.NewServer(plain.Handler)
	close := func() { srvKeyed.Close(); srvPlain.Close(); drop() }
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}, Timeout: time.Minute}
	fd := &frontDoor{rig: keyed, keys: keys}
	prepares := [numPaths]func(string, int) ([][]byte, error){
		PathNoKeys:       fd.firsts,
		PathFirst:        fd.firsts,
		PathReplay:       fd.replays,
		PathKeyReused:    fd.reusedKeys,
		PathInFlight:     fd.inFlight,
		PathGetSubmitted: fd.getsSubmitted,
		PathGetAccepted:  fd.getsAccepted,
	}
	for p, path := range FrontDoorPaths {
		rig, srv, function := keyed, srvKeyed, handler.FunctionSubmitOrder
		if p == PathNoKeys {
			rig, srv = plain, srvPlain
		}
		if p == PathGetSubmitted || p == PathGetAccepted {
			function = handler.FunctionGetOrder
		}
		url, prepare := srv.URL+"/"+function, prepares[p]
		vs = append(vs, &Variant{Name: path.Name, PerOp: 1, Concurrency: 1, counter: rig.Counter, outcomes: rig.Outcomes,
			prepare: func(prefix string, ops int) (func(context.Context, int) error, error) {
				reqs, err := prepare(prefix, ops)
				if err != nil {
					return nil, fmt.Errorf("%s: %w", path.Name, err)
				}
				return func(ctx context.Context, i int) error { return post(ctx, hc, url, reqs[i]) }, nil
			}})
	}
	return vs, close
}

// frontDoorRig is the handler as cmd/handler wires the front door: the
// executeOnce service over the key container of the target's database
// (withKeys), or over a store that keeps nothing.
func frontDoorRig(t Target, withKeys bool) (*Rig, *cosmos.KeyStore, error) {
	var keys *cosmos.KeyStore
	rig, err := newRig(t, PoolSize, func(store *cosmos.Store, cfg *handler.Config) {
		var ks idempotency.Store = keptNowhere{}
		if withKeys {
			keys = store.KeyStore(cosmos.KeyContainer)
			ks = keys
		}
		cfg.Idempotency = &idempotency.Service{Store: ks}
	})
	return rig, keys, err
}

// keptNowhere is an idempotency.Store that keeps nothing: every claim
// succeeds, so every request runs its work, and no request leaves the
// process.
type keptNowhere struct{}

func (keptNowhere) Claim(context.Context, idempotency.Record) (string, error) { return `"0"`, nil }

func (keptNowhere) Read(context.Context, string) (idempotency.Record, error) {
	return idempotency.Record{}, idempotency.ErrNotFound
}

func (keptNowhere) Replace(context.Context, idempotency.Record, string) (string, error) {
	return `"1"`, nil
}

func (keptNowhere) Release(context.Context, string, string) error { return nil }

// frontDoor builds each path's requests and the state they meet (the keys
// already used, the records still started, the orders already stored),
// through the keyed rig, before the clock starts.
type frontDoor struct {
	rig  *Rig
	keys *cosmos.KeyStore
}

// submission is the i-th order of a phase and its Idempotency-Key.
func submission(prefix string, i int) (id, key string) {
	id = fmt.Sprintf("%s-%06d", prefix, i)
	return id, "key-" + id
}

func (fd *frontDoor) firsts(prefix string, ops int) ([][]byte, error) {
	return each(ops, func(i int) ([]byte, error) {
		id, key := submission(prefix, i)
		return SubmitInvocation(key, OrderBody(id, "CUST-1"))
	})
}

// submitted sends the first request of every key of the phase and wants
// each accepted.
func (fd *frontDoor) submitted(prefix string, ops int) error {
	firsts, err := fd.firsts(prefix, ops)
	if err != nil {
		return err
	}
	return fd.setUp(handler.FunctionSubmitOrder, firsts, "accepted")
}

func (fd *frontDoor) replays(prefix string, ops int) ([][]byte, error) {
	if err := fd.submitted(prefix, ops); err != nil {
		return nil, err
	}
	return fd.firsts(prefix, ops)
}

func (fd *frontDoor) reusedKeys(prefix string, ops int) ([][]byte, error) {
	if err := fd.submitted(prefix, ops); err != nil {
		return nil, err
	}
	return each(ops, func(i int) ([]byte, error) {
		id, key := submission(prefix, i)
		return SubmitInvocation(key, OrderBody(id, "CUST-2"))
	})
}

// inFlight claims every key of the phase as its first request does before
// it runs its work: a started record whose lease has a minute to go.
func (fd *frontDoor) inFlight(prefix string, ops int) ([][]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for i := range ops {
		id, key := submission(prefix, i)
		o, err := orders.ParseOrder(OrderBody(id, "CUST-1"))
		if err != nil {
			return nil, err
		}
		scope := idempotency.Scope{Client: functionKeyClient(benchFunctionKey), Operation: handler.FunctionSubmitOrder, Key: key}
		now := time.Now().UTC()
		rec := idempotency.Record{ID: scope.ID(), Client: scope.Client, Operation: scope.Operation, Key: key,
			OrderID: id, RequestHash: o.Hash, State: idempotency.Started, Owner: "bench-" + prefix,
			LeaseUntil: now.Add(time.Minute), CreatedAt: now, UpdatedAt: now, TTL: 3600}
		if _, err := fd.keys.Claim(ctx, rec); err != nil {
			return nil, fmt.Errorf("claim %s: %w", key, err)
		}
	}
	return fd.firsts(prefix, ops)
}

func (fd *frontDoor) getsSubmitted(prefix string, ops int) ([][]byte, error) {
	if err := fd.submitted(prefix, ops); err != nil {
		return nil, err
	}
	return fd.gets(prefix, ops)
}

// getsAccepted has the consumer store every order of the phase
// (ProcessOrder) first.
func (fd *frontDoor) getsAccepted(prefix string, ops int) ([][]byte, error) {
	msgs, err := each(ops, func(i int) ([]byte, error) {
		id, _ := submission(prefix, i)
		return SingleInvocation(Delivery{Body: OrderBody(id, "CUST-1"), MessageID: id, DeliveryCount: 1})
	})
	if err != nil {
		return nil, err
	}
	if err := fd.setUp(handler.FunctionProcessOrder, msgs, "created"); err != nil {
		return nil, err
	}
	return fd.gets(prefix, ops)
}

func (fd *frontDoor) gets(prefix string, ops int) ([][]byte, error) {
	return each(ops, func(i int) ([]byte, error) {
		id, _ := submission(prefix, i)
		return GetInvocation(id)
	})
}

// setUp serves requests in process and wants each to end in outcome.
func (fd *frontDoor) setUp(function string, requests [][]byte, outcome string) error {
	fd.rig.Outcomes.Take()
	for _, req := range requests {
		if _, err := fd.rig.Invoke(function, req); err != nil {
			return err
		}
	}
	if got := fd.rig.Outcomes.Take(); !got.Only(outcome, len(requests)) {
		return fmt.Errorf("setting up with %d %s invocations: outcomes %s, want %s for each", len(requests), function, got, outcome)
	}
	return nil
}

func each(n int, f func(i int) ([]byte, error)) ([][]byte, error) {
	out := make([][]byte, n)
	for i := range out {
		var err error
		if out[i], err = f(i); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// functionKeyClient is the client scope of a caller presenting a function
// key (docs/http-api.md, "Keys and scope"): the first 16 hex digits of the
// key's SHA-256.
func functionKeyClient(key string) string {
	sum := sha256.Sum256([]byte(key))
	return "key:" + hex.EncodeToString(sum[:8])
}

// SubmitInvocation encodes POST /api/orders with the order body and the
// Idempotency-Key as the Functions host sends it to POST /SubmitOrder.
func SubmitInvocation(key string, body []byte) ([]byte, error) {
	fn, err := function(handler.FunctionSubmitOrder)
	if err != nil {
		return nil, err
	}
	h := http.Header{"Content-Type": {"application/json"}, "Content-Length": {strconv.Itoa(len(body))},
		"Idempotency-Key": {key}, "X-Functions-Key": {benchFunctionKey}, "User-Agent": {"bench"}}
	return encoder.HTTP(fn, hostemu.HTTPRequest{Method: http.MethodPost, URL: "https://" + benchHost + "/api/orders",
		Header: h, Host: benchHost, Body: body, HasBody: true}), nil
}

// GetInvocation encodes GET /api/orders/{orderId} as the Functions host
// sends it to POST /GetOrder.
func GetInvocation(orderID string) ([]byte, error) {
	fn, err := function(handler.FunctionGetOrder)
	if err != nil {
		return nil, err
	}
	h := http.Header{"X-Functions-Key": {benchFunctionKey}, "User-Agent": {"bench"}}
	return encoder.HTTP(fn, hostemu.HTTPRequest{Method: http.MethodGet, URL: "https://" + benchHost + "/api/orders/" + url.PathEscape(orderID),
		Header: h, Host: benchHost, Params: []hostemu.RouteParam{{Name: "orderId", Value: orderID}}, RouteHasParams: true}), nil
}
