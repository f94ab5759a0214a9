package bench

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// OrderBody is an order of the contract's example shape (two lines, meta)
// under id; customer varies the content, so the same id with another
// customer is a mismatch.
func OrderBody(id, customer string) []byte {
	return fmt.Appendf(nil, `{"orderId":%q,"customerId":%q,"currency":"EUR",`+
		`"lines":[{"sku":"SKU-1","quantity":2,"unitPrice":"19.99"},{"sku":"SKU-7","quantity":1,"unitPrice":"5.00"}],`+
		`"total":"44.98","placedAt":"2026-11-29T10:00:00Z","meta":{"sentAt":"2026-11-29T10:00:01.123Z","producer":"bench"}}`,
		id, customer)
}

// StatusBody is an OrderStatusChanged body.
func StatusBody(id, status string, version int64) []byte {
	return fmt.Appendf(nil, `{"orderId":%q,"status":%q,"version":%d,"changedAt":"2026-11-29T12:30:00Z"}`, id, status, version)
}

// Delivery is one message as the broker hands it to the host.
type Delivery struct {
	Body          []byte
	MessageID     string
	DeliveryCount int
	Subject       string
}

func enc(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// hostTime is how the host writes EnqueuedTimeUtc: no zone.
const hostTime = "2006-01-02T15:04:05.999"

// SingleInvocation encodes a delivery as the Functions host sends it to a
// custom handler for a one-message Service Bus trigger named "message":
// the body JSON-encoded as a string, scalar metadata JSON-encoded once more,
// and the body's top-level non-array members copied into Metadata.
func SingleInvocation(d Delivery) []byte {
	meta := map[string]any{
		"MessageActions":        map[string]any{},
		"DeliveryCount":         strconv.Itoa(d.DeliveryCount),
		"LockToken":             enc("9d2f6c1e-7b7a-4c55-8a3e-1f0e2d3c4b5a"),
		"MessageId":             enc(d.MessageID),
		"SequenceNumber":        "4711",
		"ContentType":           enc("application/json"),
		"EnqueuedTimeUtc":       time.Now().UTC().Format(hostTime),
		"ExpiresAtUtc":          "9999-12-31T23:59:59",
		"ApplicationProperties": map[string]any{},
		"UserProperties":        map[string]any{},
		"sys":                   map[string]any{"MethodName": "ProcessOrder", "UtcNow": time.Now().UTC().Format(time.RFC3339Nano)},
	}
	if d.Subject != "" {
		meta["Subject"] = enc(d.Subject)
		meta["Label"] = enc(d.Subject)
	}
	var top map[string]json.RawMessage
	if json.Unmarshal(d.Body, &top) == nil {
		for k, raw := range top {
			var v any
			_ = json.Unmarshal(raw, &v)
			switch v.(type) {
			case []any:
			case map[string]any:
				meta[k] = raw
			default:
				meta[k] = enc(v)
			}
		}
	}
	out, _ := json.Marshal(map[string]any{
		"Data":     map[string]any{"message": enc(string(d.Body))},
		"Metadata": meta,
	})
	return out
}

// BatchInvocation encodes deliveries as the host sends them for a
// "cardinality": "many", "dataType": "string" trigger named "messages":
// Data.messages and every ...Array metadata key are JSON strings holding a
// JSON array in message order.
func BatchInvocation(ds []Delivery) []byte {
	bodies := make([]string, len(ds))
	ids := make([]string, len(ds))
	counts := make([]int, len(ds))
	subjects := make([]*string, len(ds))
	enqueued := make([]string, len(ds))
	now := time.Now().UTC().Format(hostTime)
	for i, d := range ds {
		bodies[i], ids[i], counts[i], enqueued[i] = string(d.Body), d.MessageID, d.DeliveryCount, now
		if d.Subject != "" {
			subjects[i] = &ds[i].Subject
		}
	}
	out, _ := json.Marshal(map[string]any{
		"Data": map[string]any{"messages": enc(bodies)},
		"Metadata": map[string]any{
			"MessageIdArray":       enc(ids),
			"DeliveryCountArray":   enc(counts),
			"SubjectArray":         enc(subjects),
			"EnqueuedTimeUtcArray": enc(enqueued),
			"sys":                  map[string]any{"MethodName": "ProcessOrderBatch", "UtcNow": time.Now().UTC().Format(time.RFC3339Nano)},
		},
	})
	return out
}

// RunID is a short prefix that keeps the order ids of one run apart from
// those of earlier runs against the same container.
func RunID() string {
	return strings.ToUpper(strconv.FormatInt(time.Now().UnixNano()%(36*36*36*36*36*36), 36))
}
