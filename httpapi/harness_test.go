package httpapi

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/ordersink/orders-consumer/handler"
	"github.com/ordersink/orders-consumer/handler/handlertest"
	"github.com/ordersink/orders-consumer/idempotency"
	"github.com/ordersink/orders-consumer/idempotency/idemtest"
	"github.com/ordersink/orders-consumer/orders"
)

// keyStore is what the HTTP API tests need of a key store: the service's
// Store, and a record as stored.
type keyStore interface {
	idempotency.Store
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

// api is the app with SubmitOrder and GetOrder wired as cmd/handler wires
// them, served by handlertest.
type api struct {
	*handlertest.Server
	keys  keyStore
	store handlertest.Store
}

// The tests' callers. The host authenticates a caller by its function key's
// value and hands the handler the key's name (handlertest.KeyIdentities); the value
// must never show anywhere.
const (
	partnerA   = "partner-a"
	partnerB   = "partner-b"
	partnerKey = "partner-a-function-key-value-sekrit"
)

// startAPI serves the app over the test stores; configure may change the
// config (a wrapped key store, a deadline) before it starts.
func startAPI(t *testing.T, configure ...func(*config)) *api {
	t.Helper()
	return startAPIOver(t, testKeyStore(t), testStore(t), configure...)
}

// startAPIOver is startAPI over given stores: two handlers over one
// database, as two releases or two instances of the app are.
func startAPIOver(t *testing.T, keys keyStore, store handlertest.Store, configure ...func(*config)) *api {
	t.Helper()
	cfg := config{Config: handler.Config{Processor: &orders.Processor{Store: store}, Orders: store},
		Functions: Functions{Idempotency: &idempotency.Service{Store: keys}}}
	for _, c := range configure {
		c(&cfg)
	}
	return &api{Server: startServer(t, cfg), keys: keys, store: store}
}

// startServer serves the app of cfg (newServer), logging to the server's
// Logs.
func startServer(t testing.TB, cfg config) *handlertest.Server {
	t.Helper()
	return handlertest.Start(t, func(log *slog.Logger) http.Handler { return newServer(cfg, log) })
}

// newServer is the app of cfg as cmd/handler builds it: its queue functions
// and the HTTP API's (handler.Config.HTTP) on one router, logging to log.
func newServer(cfg config, log *slog.Logger) http.Handler {
	cfg.Logger, cfg.HTTP = log, cfg.Functions
	return handler.NewServer(cfg.Config)
}

// hostInvocation encodes one Service Bus message the way the Functions host
// does for ProcessOrder as deployed (handlertest.Invocation).
func hostInvocation(body []byte, messageID string, deliveryCount int) []byte {
	return handlertest.Invocation(handler.TriggerBinding, body, messageID, deliveryCount)
}

// partition is the decoded documents of orderID's partition in the test
// store.
func partition(t *testing.T, orderID string) []map[string]any {
	t.Helper()
	return handlertest.Partition(t, testStore(t), orderID)
}

// submitCall is POST /api/orders by partner A with the key (none when "")
// and body: its function key sent in x-functions-key, named by the host.
func submitCall(key string, body []byte) httpCall {
	h := http.Header{"Content-Type": {"application/json"}, "X-Functions-Key": {partnerKey}}
	if key != "" {
		h.Set(headerIdempotencyKey, key)
	}
	return httpCall{method: http.MethodPost, target: ordersPath, header: h, body: body, keyName: partnerA}
}

// getCall is GET /api/orders/{orderId} by partner A, the orderId escaped
// in the path as a client sends it.
func getCall(orderID string) httpCall {
	return httpCall{method: http.MethodGet, target: ordersPath + "/" + url.PathEscape(orderID), keyName: partnerA,
		header: http.Header{"X-Functions-Key": {partnerKey}}, params: map[string]string{"orderId": orderID}}
}

// by returns c as sent by the partner whose function key is named name.
func (c httpCall) by(name string) httpCall {
	c.keyName = name
	c.header = c.header.Clone()
	c.header.Set("X-Functions-Key", name+"-function-key-value")
	return c
}

func (d *api) call(t *testing.T, function string, c httpCall) callerAnswer {
	t.Helper()
	return respondedTo(t, d.Invoke(t, function, hostHTTPInvocation(function, c)))
}

func (d *api) submit(t *testing.T, key string, body []byte) callerAnswer {
	t.Helper()
	return d.call(t, FunctionSubmitOrder, submitCall(key, body))
}

func (d *api) get(t *testing.T, c httpCall) callerAnswer {
	t.Helper()
	return d.call(t, FunctionGetOrder, c)
}

// wantProblem checks an RFC 9457 answer: the status, the content type, the
// members, the type's anchor, and no internals.
func wantProblem(t *testing.T, a callerAnswer, status int, anchor string) problem {
	t.Helper()
	if a.StatusCode != status {
		t.Fatalf("status %d, want %d; body %.500s", a.StatusCode, status, a.Body)
	}
	if ct := a.Header.Get("Content-Type"); ct != "application/problem+json" {
		t.Errorf("Content-Type %q, want application/problem+json", ct)
	}
	wantNoStore(t, a)
	var p problem
	if err := json.Unmarshal(a.Body, &p); err != nil {
		t.Fatalf("problem body is not JSON: %s", a.Body)
	}
	if p.Type != ProblemTypeBase+anchor || p.Status != status || p.Title == "" || p.Detail == "" || p.Instance == "" {
		t.Errorf("problem %+v, want type …#%s, status %d, a title, detail and instance", p, anchor, status)
	}
	for _, internal := range []string{partnerKey, "goroutine", "StoreError", ".go:", "activity", "azcosmos", "sekrit"} {
		if strings.Contains(string(a.Body), internal) {
			t.Errorf("problem body shows %q: %s", internal, a.Body)
		}
	}
	if len(a.Outputs) != 1 {
		t.Errorf("outputs %v, want only %s", a.Outputs, handler.HTTPResponseBinding)
	}
	return p
}

// wantOrder checks an answer carrying an order: status, JSON, and the
// public view of the stored order document, byte for byte.
func (d *api) wantOrder(t *testing.T, a callerAnswer, status int, orderID string) {
	t.Helper()
	if a.StatusCode != status {
		t.Fatalf("status %d, want %d; body %.500s", a.StatusCode, status, a.Body)
	}
	if ct := a.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q, want application/json", ct)
	}
	wantNoStore(t, a)
	view, err := orders.PublicView(d.storedOrder(t, orderID))
	if err != nil {
		t.Fatal(err)
	}
	if string(a.Body) != string(view) {
		t.Errorf("body\n %.500s\nwant the stored order's public view\n %.500s", a.Body, view)
	}
	var m map[string]any
	if err := json.Unmarshal(a.Body, &m); err != nil {
		t.Fatalf("body is not a JSON object: %.500s", a.Body)
	}
	for _, private := range []string{"id", "type", "messageId", "owner", "submissionId", "_etag", "_rid", "_ts"} {
		if _, ok := m[private]; ok {
			t.Errorf("the answer shows %q: %.500s", private, a.Body)
		}
	}
	if m["orderId"] != orderID || m["requestHash"] == nil || m["acceptedAt"] == nil || m["hashVersion"] == nil {
		t.Errorf("the answer lacks orderId, requestHash, acceptedAt or hashVersion: %.500s", a.Body)
	}
	if len(a.Outputs) != 1 {
		t.Errorf("outputs %v, want only %s", a.Outputs, handler.HTTPResponseBinding)
	}
}

// storedOrder is the order document of orderID as the store holds it.
func (d *api) storedOrder(t *testing.T, orderID string) json.RawMessage {
	t.Helper()
	doc, err := d.store.(orders.OrderReader).ReadOrder(context.Background(), orderID)
	if err != nil || doc == nil {
		t.Fatalf("read order %s: %s, %v", orderID, doc, err)
	}
	return doc
}

// keyID is the record id of partner A's key.
func keyID(key string) string {
	return idempotency.Scope{Client: "key:" + partnerA, Operation: FunctionSubmitOrder, Key: key}.ID()
}

// wantNoKey checks that no key record was claimed for partner A's key.
func (d *api) wantNoKey(t *testing.T, key string) {
	t.Helper()
	if doc, err := d.keys.Document(context.Background(), keyID(key)); doc != nil || err != nil {
		t.Errorf("key record of %q: %s, %v; want none (nothing claimed)", key, doc, err)
	}
}

// wantWritten checks that the order's partition holds exactly the order and
// its OrderAccepted event.
func wantWritten(t *testing.T, orderID string) {
	t.Helper()
	docs := partition(t, orderID)
	if len(docs) != 2 || len(handlertest.DocumentsOfType(docs, orders.TypeOrder)) != 1 || len(handlertest.DocumentsOfType(docs, orders.TypeOutboxEvent)) != 1 {
		t.Errorf("partition %s holds %d documents (%d orders, %d events); want the order and its event, nothing else",
			orderID, len(docs), len(handlertest.DocumentsOfType(docs, orders.TypeOrder)), len(handlertest.DocumentsOfType(docs, orders.TypeOutboxEvent)))
	}
}

// wantNoStore checks that an answer forbids every cache to keep it: each is
// for its caller alone (RFC 9111 §5.2.2.5).
func wantNoStore(t *testing.T, a callerAnswer) {
	t.Helper()
	if cc := a.Header.Values("Cache-Control"); len(cc) != 1 || cc[0] != "no-store" {
		t.Errorf("Cache-Control %q, want no-store", cc)
	}
}
