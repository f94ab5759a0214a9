package handler

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/ordersink/orders-consumer/idempotency"
	"github.com/ordersink/orders-consumer/idempotency/idemtest"
	"github.com/ordersink/orders-consumer/internal/hostjson"
	"github.com/ordersink/orders-consumer/orders"
)

// keyStore is what the front door needs of a key store: the service's
// Store, and finding a submission by orderId.
type keyStore interface {
	idempotency.Store
	SubmissionFinder
	// Document returns a record as stored, nil when there is none.
	Document(ctx context.Context, id string) (json.RawMessage, error)
}

// testKeyStore is the key store behind SubmitOrder: Cosmos DB's
// idempotency-keys container, or with -short idemtest.MemStore, which passes
// the same store suite (idemtest.TestStore).
func testKeyStore(t testing.TB) keyStore {
	t.Helper()
	if testing.Short() {
		return idemtest.NewMemStore()
	}
	return cosmosKeyStore(t)
}

// frontDoor is the handler with SubmitOrder and GetOrder wired as
// cmd/handler wires them.
type frontDoor struct {
	*testServer
	keys  keyStore
	store readableStore
}

// partnerKey is the function key the tests' caller presents.
const partnerKey = "partner-a-function-key"

// startFrontDoor serves the handler over the test stores; configure may
// change the Config (a wrapped key store, a deadline) before it starts.
func startFrontDoor(t *testing.T, configure ...func(*Config)) *frontDoor {
	t.Helper()
	keys, store := testKeyStore(t), testStore(t)
	cfg := Config{Processor: &orders.Processor{Store: store}, Idempotency: &idempotency.Service{Store: keys},
		Orders: store, Submissions: keys}
	for _, c := range configure {
		c(&cfg)
	}
	return &frontDoor{testServer: startServerWith(t, cfg), keys: keys, store: store}
}

// submitCall is POST /api/orders with the key (none when ""), the partner's
// function key and body.
func submitCall(key string, body []byte) httpCall {
	h := http.Header{"Content-Type": {"application/json"}, "X-Functions-Key": {partnerKey}}
	if key != "" {
		h.Set(headerIdempotencyKey, key)
	}
	return httpCall{method: http.MethodPost, target: ordersPath, header: h, body: body}
}

func (d *frontDoor) call(t *testing.T, function string, c httpCall) callerAnswer {
	t.Helper()
	return respondedTo(t, d.invokeFunction(t, function, hostHTTPInvocation(function, c)))
}

func (d *frontDoor) submit(t *testing.T, key string, body []byte) callerAnswer {
	t.Helper()
	return d.call(t, FunctionSubmitOrder, submitCall(key, body))
}

func (d *frontDoor) get(t *testing.T, orderID string, header http.Header) callerAnswer {
	t.Helper()
	if header == nil {
		header = http.Header{"X-Functions-Key": {partnerKey}}
	}
	return d.call(t, FunctionGetOrder, httpCall{method: http.MethodGet, target: ordersPath + "/" + orderID,
		header: header, params: map[string]string{"orderId": orderID}})
}

// sentOrder decodes the order output as the consumer will read it.
func sentOrder(t *testing.T, a callerAnswer) *Requeued {
	t.Helper()
	raw, ok := a.Outputs[OrderBinding]
	if !ok {
		return nil
	}
	var v map[string]*Requeued
	if err := json.Unmarshal(raw, &v); err != nil || len(v) != 1 || v[requeueKey] == nil {
		t.Fatalf("order output is not a given-back envelope: %s", raw)
	}
	return v[requeueKey]
}

// deliver sends the answer's order output through ProcessOrder as the host
// and the broker would: the output object re-serialised by the host
// (indented), delivered with a MessageId the broker chose.
func (d *frontDoor) deliver(t *testing.T, a callerAnswer) answer {
	t.Helper()
	raw, ok := a.Outputs[OrderBinding]
	if !ok {
		t.Fatal("the answer has no order output to deliver")
	}
	sent, err := hostjson.Indent(raw)
	if err != nil {
		t.Fatal(err)
	}
	got := d.invoke(t, hostInvocation(sent, "5f0c9a1e-b1d3-4c2a-9e8f-0a1b2c3d4e5f", 1))
	if got.Status != http.StatusOK || got.parked(t) != nil {
		t.Fatalf("ProcessOrder: %d, parked %+v", got.Status, got.parked(t))
	}
	return got
}

// wantProblem checks an RFC 9457 answer: the status, the content type, the
// members, the type's anchor, and no internals.
func wantProblem(t *testing.T, a callerAnswer, status int, anchor string) problem {
	t.Helper()
	if a.StatusCode != status {
		t.Fatalf("status %d, want %d; body %s", a.StatusCode, status, a.Body)
	}
	if ct := a.Header.Get("Content-Type"); ct != "application/problem+json" {
		t.Errorf("Content-Type %q, want application/problem+json", ct)
	}
	var p problem
	if err := json.Unmarshal(a.Body, &p); err != nil {
		t.Fatalf("problem body is not JSON: %s", a.Body)
	}
	if p.Type != ProblemTypeBase+anchor || p.Status != status || p.Title == "" || p.Detail == "" || p.Instance == "" {
		t.Errorf("problem %+v, want type …#%s, status %d, a title, detail and instance", p, anchor, status)
	}
	if p.InvocationID != a.InvocationID {
		t.Errorf("problem invocationId %q, want %q", p.InvocationID, a.InvocationID)
	}
	for _, internal := range []string{partnerKey, "goroutine", "StoreError", ".go:", "activity", "azcosmos", "sekrit"} {
		if strings.Contains(string(a.Body), internal) {
			t.Errorf("problem body shows %q: %s", internal, a.Body)
		}
	}
	if _, ok := a.Outputs[OrderBinding]; ok {
		t.Errorf("a %d answer sends the order: %s", status, a.Outputs[OrderBinding])
	}
	return p
}

// wantNoKey checks that no key record was claimed for the key.
func (d *frontDoor) wantNoKey(t *testing.T, key string) {
	t.Helper()
	id := idempotency.Scope{Client: "key:" + shortSHA256(partnerKey), Operation: FunctionSubmitOrder, Key: key}.ID()
	if doc, err := d.keys.Document(context.Background(), id); doc != nil || err != nil {
		t.Errorf("key record of %q: %s, %v; want none (nothing claimed)", key, doc, err)
	}
}
