package handler

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ordersink/orders-consumer/handler/handlertest"
	"github.com/ordersink/orders-consumer/orders"
	"github.com/ordersink/orders-consumer/orders/orderstest"
)

// hostInvocation encodes one Service Bus message the way the Functions host
// does for ProcessOrder as deployed (handlertest.Invocation).
func hostInvocation(body []byte, messageID string, deliveryCount int) []byte {
	return handlertest.Invocation(TriggerBinding, body, messageID, deliveryCount)
}

// hostStringInvocation encodes a message for a string-typed trigger
// (handlertest.StringInvocation).
func hostStringInvocation(body []byte, messageID string, deliveryCount int) []byte {
	return handlertest.StringInvocation(TriggerBinding, body, messageID, deliveryCount)
}

// withSubject sets the Subject (and its Label alias) of a single-message
// invocation built by hostInvocation.
func withSubject(t *testing.T, request []byte, subject string) []byte {
	t.Helper()
	var inv map[string]map[string]json.RawMessage
	if err := json.Unmarshal(request, &inv); err != nil {
		t.Fatal(err)
	}
	inv["Metadata"]["Subject"] = json.RawMessage(handlertest.Enc(handlertest.Enc(subject)))
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
		"Data": map[string]any{BatchTriggerBinding: handlertest.Enc(bodies)},
		"Metadata": map[string]any{
			"MessageActions":       map[string]any{},
			"DeliveryCountArray":   handlertest.Enc(counts),
			"MessageIdArray":       handlertest.Enc(ids),
			"LockTokenArray":       handlertest.Enc(locks),
			"SubjectArray":         handlertest.Enc(subjects),
			"LabelArray":           handlertest.Enc(subjects),
			"EnqueuedTimeUtcArray": handlertest.Enc(enqueued),
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
		"Data":     map[string]any{DocumentsBinding: handlertest.Enc(handlertest.Enc(docs))},
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

// addRequestSeeds adds the host-format requests of testdata (invocations,
// the corpus) and one built here as seeds of a fuzz target.
func addRequestSeeds(f *testing.F) {
	for _, dir := range []string{"invocations", "corpus"} {
		files, _ := filepath.Glob(filepath.Join("testdata", dir, "*.json"))
		for _, name := range files {
			if strings.HasSuffix(name, "cases.json") {
				continue
			}
			if b, err := os.ReadFile(name); err == nil {
				f.Add(b)
			}
		}
	}
	f.Add(hostInvocation([]byte(orderstest.ExampleBody), "ORD-2026-000123", 1))
}
