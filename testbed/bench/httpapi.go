package bench

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/ordersink/orders-consumer/cosmos"
	"github.com/ordersink/orders-consumer/handler"
	"github.com/ordersink/orders-consumer/httpapi"
	"github.com/ordersink/orders-consumer/idempotency"
	"github.com/ordersink/orders-consumer/testbed/hostemu"
)

// The paths of a request through the HTTP API (docs/http-api.md), in the
// order a round holds them.
const (
	// PathNoKeys is SubmitOrder over a key store that keeps nothing and
	// makes no request: the admission, the order's batch and the answer,
	// without what executeOnce costs in Cosmos DB. The baseline.
	PathNoKeys = iota
	PathFirst
	PathReplay
	PathResent
	PathTaken
	PathGet
	numPaths
)

// HTTPAPIPath describes one path: the outcome the handler logs for each
// of its requests, the fewest Cosmos requests the design allows, and the
// request that takes it.
type HTTPAPIPath struct {
	Name  string
	Want  string
	Floor float64
	// afterFirst: the orders are created by their owner's first requests
	// before the clock starts.
	afterFirst bool
	// request is the path's request for one order and its Idempotency-Key
	// (submission).
	request func(orderID, key string) ([]byte, error)
}

// HTTPAPIPaths are the paths, indexed by Path....
var HTTPAPIPaths = [numPaths]HTTPAPIPath{
	PathNoKeys: {"first request, key store that keeps nothing (baseline: the order's batch only)", "created", 1, false, firstSubmission},
	PathFirst:  {"first request (201)", "created", 3, false, firstSubmission},
	PathReplay: {"replay: same key, same payload (stored 201, `Idempotent-Replayed`)", "replayed", 2, true, firstSubmission},
	PathResent: {"same order under a new key (200)", "resent", 4, true, func(id, key string) ([]byte, error) {
		return SubmitInvocation(benchClient, key+"-again", OrderBody(id, "CUST-1"))
	}},
	// Other content: the same content from another client is no conflict
	// (its receipt, docs/http-api.md).
	PathTaken: {"orderId taken by another client (409 `order-id-taken`)", "taken", 4, true, func(id, key string) ([]byte, error) {
		return SubmitInvocation(benchOtherClient, key+"-other", OrderBody(id, "CUST-2"))
	}},
	PathGet: {"GET by the order's owner (200)", "found", 1, true, func(id, _ string) ([]byte, error) {
		return GetInvocation(benchClient, id)
	}},
}

// The function key names of the bench's two callers (the host hands the
// handler the name, docs/http-api.md "Keys and scope").
const (
	benchClient      = "bench-partner-a"
	benchOtherClient = "bench-partner-b"
)

// benchHost is the app's host name in the requests' URLs.
const benchHost = "orders-bench.azurewebsites.net"

// submission is the i-th order of a phase and its Idempotency-Key.
func submission(prefix string, i int) (id, key string) {
	id = orderID(prefix, i)
	return id, "key-" + id
}

// firstSubmission is the order sent by its owner under its key.
func firstSubmission(id, key string) ([]byte, error) {
	return SubmitInvocation(benchClient, key, OrderBody(id, "CUST-1"))
}

// HTTPAPIVariants builds a Variant per path (indexed by Path...), each
// sending host-format invocations of SubmitOrder or GetOrder one at a time
// over loopback HTTP to the handler served in this process, as the
// Functions host does. They write to a database of their own, created here
// beside t's, so that the paths meet only their own orders. close releases
// their servers and drops the database.
func HTTPAPIVariants(t Target) (vs []*Variant, close func(), err error) {
	t.Database += "-fd-" + strings.ToLower(RunID())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	drop, err := t.Create(ctx)
	if err != nil {
		return nil, nil, err
	}
	keyed, err := httpAPIRig(t, true)
	var plain *Rig
	if err == nil {
		plain, err = httpAPIRig(t, false)
	}
	if err != nil {
		_ = drop()
		return nil, nil, err
	}
	srvKeyed, srvPlain := httptest.NewServer(keyed.Handler), httptest.NewServer(plain.Handler)
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}, Timeout: time.Minute}
	for p, path := range HTTPAPIPaths {
		rig, srv, function := keyed, srvKeyed, httpapi.FunctionSubmitOrder
		if p == PathNoKeys {
			rig, srv = plain, srvPlain
		}
		if p == PathGet {
			function = httpapi.FunctionGetOrder
		}
		vs = append(vs, rig.variant(path.Name, 1, 1, sending(path.requests(keyed), post(hc, srv.URL+"/"+function))))
	}
	// Dropping is best effort: a database left behind holds only bench orders.
	return vs, func() { srvKeyed.Close(); srvPlain.Close(); _ = drop() }, nil
}

// requests builds the path's requests and the state they meet (the keys
// already used, the orders already stored), through the keyed rig, before
// the clock starts.
func (path HTTPAPIPath) requests(keyed *Rig) func(prefix string, ops int) ([][]byte, error) {
	return func(prefix string, ops int) ([][]byte, error) {
		build := func(request func(id, key string) ([]byte, error)) ([][]byte, error) {
			return each(ops, func(i int) ([]byte, error) { return request(submission(prefix, i)) })
		}
		if path.afterFirst {
			firsts, err := build(firstSubmission)
			if err == nil {
				err = setUp(keyed, firsts)
			}
			if err != nil {
				return nil, fmt.Errorf("%s: %w", path.Name, err)
			}
		}
		reqs, err := build(path.request)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path.Name, err)
		}
		return reqs, nil
	}
}

// setUp serves first requests in process and wants each to create its order.
func setUp(rig *Rig, requests [][]byte) error {
	rig.Outcomes.Take()
	for _, req := range requests {
		if err := rig.Invoke(httpapi.FunctionSubmitOrder, req); err != nil {
			return err
		}
	}
	if got := rig.Outcomes.Take(); !got.Only("created", len(requests)) {
		return fmt.Errorf("setting up with %d %s invocations: outcomes %s, want created for each", len(requests), httpapi.FunctionSubmitOrder, got)
	}
	return nil
}

// httpAPIRig is the handler as cmd/handler wires the HTTP API: the
// executeOnce service over the key container of the target's database
// (withKeys), or over a store that keeps nothing.
func httpAPIRig(t Target, withKeys bool) (*Rig, error) {
	return newRig(t, func(store *cosmos.Store, cfg *handler.Config) {
		var ks idempotency.Store = keptNowhere{}
		if withKeys {
			ks = store.KeyStore(cosmos.KeyContainer)
		}
		cfg.HTTP = httpapi.Functions{Idempotency: &idempotency.Service{Store: ks}}
	})
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

// SubmitInvocation encodes POST /api/orders by the caller whose function
// key is named client, with the order body and the Idempotency-Key, as the
// Functions host sends it to POST /SubmitOrder.
func SubmitInvocation(client, key string, body []byte) ([]byte, error) {
	fn, err := function(httpapi.FunctionSubmitOrder)
	if err != nil {
		return nil, err
	}
	h := http.Header{"Content-Type": {"application/json"}, "Content-Length": {strconv.Itoa(len(body))},
		"Idempotency-Key": {key}, "X-Functions-Key": {client + "-function-key-value"}, "User-Agent": {"bench"}}
	return encoder.HTTP(fn, hostemu.HTTPRequest{Method: http.MethodPost, URL: "https://" + benchHost + "/api/orders",
		Header: h, Host: benchHost, Body: body, HasBody: true, KeyName: client}), nil
}

// GetInvocation encodes GET /api/orders/{orderId} by the caller whose
// function key is named client, as the Functions host sends it to POST
// /GetOrder.
func GetInvocation(client, orderID string) ([]byte, error) {
	fn, err := function(httpapi.FunctionGetOrder)
	if err != nil {
		return nil, err
	}
	h := http.Header{"X-Functions-Key": {client + "-function-key-value"}, "User-Agent": {"bench"}}
	return encoder.HTTP(fn, hostemu.HTTPRequest{Method: http.MethodGet, URL: "https://" + benchHost + "/api/orders/" + url.PathEscape(orderID),
		Header: h, Host: benchHost, Params: []hostemu.RouteParam{{Name: "orderId", Value: orderID}}, RouteHasParams: true, KeyName: client}), nil
}
