package handlertest

import (
	"encoding/base64"
	"encoding/json"
	"strconv"
)

// Invocation encodes one Service Bus message the way the Functions host
// does for ProcessOrder as deployed ("dataType": "binary"): the body as
// base64 under the trigger binding, scalars double-encoded, dates without a
// zone, nothing copied from the body into Metadata.
func Invocation(binding string, body []byte, messageID string, deliveryCount int) []byte {
	return encodeInvocation(binding, body, messageID, deliveryCount, true)
}

// StringInvocation encodes a message for a string-typed trigger
// (docs/host-wire-format.md §1.2-1.4): the body JSON-encoded twice under the
// trigger binding, and the body's top-level non-array members copied into
// Metadata, overwriting.
func StringInvocation(binding string, body []byte, messageID string, deliveryCount int) []byte {
	return encodeInvocation(binding, body, messageID, deliveryCount, false)
}

func encodeInvocation(binding string, body []byte, messageID string, deliveryCount int, binary bool) []byte {
	meta := map[string]any{
		"MessageActions":        map[string]any{},
		"DeliveryCount":         strconv.Itoa(deliveryCount),
		"LockToken":             Enc("9d2f6c1e-7b7a-4c55-8a3e-1f0e2d3c4b5a"),
		"MessageId":             Enc(messageID),
		"SequenceNumber":        "4711",
		"ContentType":           Enc("application/json"),
		"EnqueuedTimeUtc":       "2026-11-29T10:00:02",
		"EnqueuedTime":          "2026-11-29T10:00:02+00:00",
		"ExpiresAtUtc":          "9999-12-31T23:59:59",
		"ApplicationProperties": map[string]any{},
		"UserProperties":        map[string]any{},
		"sys":                   map[string]any{"MethodName": "ProcessOrder", "UtcNow": "2026-11-29T10:00:02.5123456Z"},
	}
	if !binary {
		AddBodyMembers(meta, body)
	}
	trigger := Enc(string(body))
	if binary {
		trigger = base64.StdEncoding.EncodeToString(body)
	}
	out, _ := json.Marshal(map[string]any{
		"Data":     map[string]any{binding: trigger},
		"Metadata": meta,
	})
	return out
}

// AddBodyMembers adds to meta the top-level members of a JSON object body as
// the host binds them to metadata: objects as they are, scalars as their
// JSON encoding, arrays not at all. A body that is no object adds nothing.
func AddBodyMembers(meta map[string]any, body []byte) {
	var top map[string]json.RawMessage
	if json.Unmarshal(body, &top) != nil {
		return
	}
	for k, raw := range top {
		var v any
		_ = json.Unmarshal(raw, &v)
		switch v.(type) {
		case []any:
		case map[string]any:
			meta[k] = raw
		default:
			meta[k] = Enc(v)
		}
	}
}

// Enc JSON-encodes a value once more, as the host does for every value that
// is not an object (docs/host-wire-format.md §1.2).
func Enc(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
