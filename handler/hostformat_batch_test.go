package handler

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ordersink/orders-consumer/cosmos"
	"github.com/ordersink/orders-consumer/orders"
)

// enc JSON-encodes a value once more, as the host does for every value that
// is not an object (docs/host-wire-format.md §1.2).
func enc(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// withSubject sets the Subject (and its Label alias) of a single-message
// invocation built by hostInvocation.
func withSubject(t *testing.T, request []byte, subject string) []byte {
	t.Helper()
	var inv map[string]map[string]json.RawMessage
	if err := json.Unmarshal(request, &inv); err != nil {
		t.Fatal(err)
	}
	inv["Metadata"]["Subject"] = json.RawMessage(enc(enc(subject)))
	inv["Metadata"]["Label"] = inv["Metadata"]["Subject"]
	out, _ := json.Marshal(inv)
	return out
}

// batchMessage is one message of a batch invocation.
type batchMessage struct {
	body          []byte
	messageID     string
	deliveryCount int
	subject       string // "" sends null, as the host does for no Subject
}

// hostBatch encodes messages as the host does for "cardinality": "many" and
// "dataType": "binary", as ProcessOrderBatch is bound (docs/host-wire-format.md §1.5): the
// bodies as a JSON string holding an array of base64 strings, and each ...Array metadata key as a JSON string
// holding an array in message order, null where a value is absent.
func hostBatch(msgs []batchMessage) []byte {
	bodies := make([]string, len(msgs))
	ids := make([]string, len(msgs))
	counts := make([]int, len(msgs))
	subjects := make([]any, len(msgs))
	enqueued := make([]string, len(msgs))
	locks := make([]string, len(msgs))
	for i, m := range msgs {
		bodies[i], ids[i], counts[i] = base64.StdEncoding.EncodeToString(m.body), m.messageID, m.deliveryCount
		if m.subject != "" {
			subjects[i] = m.subject
		}
		enqueued[i] = fmt.Sprintf("2026-11-29T10:00:%02d.%03d", i%60, i)
		locks[i] = fmt.Sprintf("9d2f6c1e-7b7a-4c55-8a3e-%012d", i)
	}
	out, _ := json.Marshal(map[string]any{
		"Data": map[string]any{BatchTriggerBinding: enc(bodies)},
		"Metadata": map[string]any{
			"MessageActions":       map[string]any{},
			"DeliveryCountArray":   enc(counts),
			"MessageIdArray":       enc(ids),
			"LockTokenArray":       enc(locks),
			"SubjectArray":         enc(subjects),
			"LabelArray":           enc(subjects),
			"EnqueuedTimeUtcArray": enc(enqueued),
			"sys":                  map[string]any{"MethodName": FunctionProcessOrderBatch, "UtcNow": "2026-11-29T10:00:02.5123456Z"},
		},
	})
	return out
}

// hostChangeFeed encodes documents as the host does for a cosmosDBTrigger
// (testdata/changefeed/README.md): the compact JSON array text, JSON-encoded
// once more, under Data.documents; Metadata holds only sys.
func hostChangeFeed(docs []json.RawMessage) []byte {
	if docs == nil {
		docs = []json.RawMessage{}
	}
	out, _ := json.Marshal(map[string]any{
		"Data":     map[string]any{DocumentsBinding: enc(enc(docs))},
		"Metadata": map[string]any{"sys": map[string]any{"MethodName": FunctionPublishOrderEvents, "UtcNow": "2026-11-29T10:00:02.723203Z"}},
	})
	return out
}

// statusBody is an OrderStatusChanged body.
func statusBody(orderID, status string, version int64) []byte {
	return fmt.Appendf(nil, `{"orderId":%q,"status":%q,"version":%d,"changedAt":"2026-11-29T12:%02d:00Z"}`,
		orderID, status, version, version%60)
}

// statusInvocation is a single-message OrderStatusChanged delivery; producers
// set the MessageId to orderId:status:version so that Service Bus duplicate
// detection never drops it as a copy of the order message.
func statusInvocation(t *testing.T, orderID, status string, version int64, deliveryCount int) []byte {
	t.Helper()
	id := fmt.Sprintf("%s:status:%d", orderID, version)
	return withSubject(t, hostInvocation(statusBody(orderID, status, version), id, deliveryCount), string(orders.OrderStatusChanged))
}

// docsOf reads a partition as raw documents keyed by id.
func docsOf(t *testing.T, orderID string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, d := range partition(t, orderID) {
		b, _ := json.Marshal(d)
		out[d["id"].(string)] = string(b)
	}
	return out
}

// countingTransport records the requests a Store sends, naming transactional
// batches apart from other POSTs.
type countingTransport struct {
	base http.RoundTripper
	mu   sync.Mutex
	seen []string
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	kind := r.Method + " " + r.URL.Path
	if strings.EqualFold(r.Header.Get("x-ms-cosmos-is-batch-request"), "true") {
		kind = "BATCH " + r.URL.Path
	}
	c.mu.Lock()
	c.seen = append(c.seen, kind)
	c.mu.Unlock()
	return c.base.RoundTrip(r)
}

// since returns the requests recorded after the first n.
func (c *countingTransport) since(n int) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.seen[n:]...)
}

func (c *countingTransport) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.seen)
}

// countingStore opens a Store on the test database whose requests are
// recorded, and warms it up (account and container metadata) so that later
// counts are the round trips of the operations alone.
func countingStore(t *testing.T) (*cosmos.Store, *countingTransport) {
	t.Helper()
	ct := &countingTransport{base: http.DefaultTransport.(*http.Transport).Clone()}
	o := testEnv(t).Options()
	o.Transport = ct
	store, err := cosmos.Open(o, testEnv(t).Database, testEnv(t).Container)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := store.PartitionDocuments(ctx, "warm-up"); err != nil {
		t.Fatal(err)
	}
	return store, ct
}
