package handler

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// invocation is the body the host POSTs for a non-HTTP trigger.
type invocation struct {
	Data     map[string]json.RawMessage `json:"Data"`
	Metadata metadata                   `json:"Metadata"`
}

// metadata holds the trigger metadata the handler reads. The host sends many
// more keys (settlement objects, the client, sys and, for string bodies, a
// copy of the body's members); decoding skips them without copying.
type metadata struct {
	DeliveryCount        json.RawMessage
	MessageId            json.RawMessage
	Subject              json.RawMessage
	Label                json.RawMessage
	EnqueuedTimeUtc      json.RawMessage
	DeliveryCountArray   json.RawMessage
	MessageIdArray       json.RawMessage
	SubjectArray         json.RawMessage
	LabelArray           json.RawMessage
	EnqueuedTimeUtcArray json.RawMessage
}

// errEnvelope marks a request that is not a well-formed invocation.
var errEnvelope = errors.New("invocation envelope")

func decodeInvocation(b []byte) (*invocation, error) {
	var inv invocation
	if err := json.Unmarshal(b, &inv); err != nil {
		return nil, fmt.Errorf("%w: not a JSON object with Data and Metadata: %v", errEnvelope, err)
	}
	if inv.Data == nil {
		return nil, fmt.Errorf("%w: has no Data member", errEnvelope)
	}
	return &inv, nil
}

// readInvocation reads at most limit bytes of the request and decodes the
// envelope. A request over the limit is an *http.MaxBytesError.
func readInvocation(w http.ResponseWriter, r *http.Request, limit int64) (*invocation, error) {
	raw, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		return nil, err
	}
	return decodeInvocation(raw)
}

// undecodable fails an invocation of a batch or change-feed function whose
// request cannot be decoded: without its messages there is nothing to park,
// and failing keeps them whole where they came from (the broker, or the
// change feed under the function's retry policy).
func (cfg Config) undecodable(w http.ResponseWriter, function, invocationID string, err error) {
	cfg.Logger.Error("invocation not decodable", "function", function, "invocationId", invocationID, "err", err.Error())
	out := newResult()
	out.Logs = append(out.Logs, fmt.Sprintf("%s: invocation not decodable, will be retried: %v", function, err))
	encode(w, cfg.Logger, http.StatusInternalServerError, out)
}

// triggerText returns the message body of a single-message trigger binding.
// The host JSON-encodes the body text twice; older hosts, other tools and
// "dataType": "binary" send it once or as base64, so all three are accepted.
func (inv *invocation) triggerText(binding string) (body []byte, copied bool, err error) {
	raw, ok := inv.Data[binding]
	if !ok {
		return nil, false, fmt.Errorf("%w: Data has no %q member (the trigger binding name in function.json)", errEnvelope, binding)
	}
	return decodeTriggerValue(raw)
}

// decodeTriggerValue returns the body and whether the host copied its
// top-level members into Metadata: it does so when the trigger value is a
// string holding a JSON object ("dataType" string or unset), not for base64
// ("dataType": "binary").
// Pattern: Tolerant reader (docs/design-patterns.md#tolerant-reader).
func decodeTriggerValue(raw json.RawMessage) (body []byte, copied bool, err error) {
	raw = bytes.TrimSpace(raw)
	switch {
	case len(raw) == 0 || string(raw) == "null":
		return nil, false, fmt.Errorf("%w: the trigger value is null", errEnvelope)
	case raw[0] == '{':
		// An object instead of a string: a host that did not encode it.
		return raw, false, nil
	case raw[0] != '"':
		return nil, false, fmt.Errorf("%w: the trigger value is neither a string nor an object", errEnvelope)
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, false, fmt.Errorf("%w: the trigger value is not a JSON string: %v", errEnvelope, err)
	}
	body, fromBase64 := unwrapText(s)
	return body, !fromBase64 && bytes.HasPrefix(bytes.TrimSpace(body), []byte("{")), nil
}

// unwrapText decodes a trigger value's string: base64 of the body for
// "dataType": "binary" (the shipped bindings); for a string binding, a JSON
// string literal (the host encodes a single body twice) is decoded again and
// text that looks like JSON is kept.
func unwrapText(s string) (body []byte, fromBase64 bool) {
	t := strings.TrimSpace(s)
	if strings.HasPrefix(t, `"`) {
		var inner string
		if json.Unmarshal([]byte(t), &inner) == nil {
			return []byte(inner), false
		}
	}
	if strings.HasPrefix(t, "{") || strings.HasPrefix(t, "[") {
		return []byte(s), false
	}
	if b, err := base64.StdEncoding.Strict().DecodeString(t); err == nil && len(t) > 0 {
		return b, true
	}
	return []byte(s), false
}

// metaString reads a scalar metadata value: a JSON string holding the value
// JSON-encoded again ("\"A-1001\"" for a string, "1" for a number). A bare
// JSON value or a singly encoded string is accepted too.
func metaString(raw json.RawMessage) (string, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", false
	}
	if raw[0] != '"' {
		return string(raw), true
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	if strings.HasPrefix(s, `"`) {
		var inner string
		if json.Unmarshal([]byte(s), &inner) == nil {
			return inner, true
		}
	}
	return s, true
}

// metaInt reads an integer metadata value such as DeliveryCount.
func metaInt(raw json.RawMessage) (int, bool) {
	s, ok := metaString(raw)
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		return 0, false
	}
	return n, true
}

// hostTimeLayouts are the shapes the host gives dates: no zone and whole
// seconds for single messages, fractions for batches, an offset for the
// DateTimeOffset keys.
var hostTimeLayouts = []string{
	"2006-01-02T15:04:05",
	"2006-01-02T15:04:05.9999999",
	time.RFC3339Nano,
}

// parseHostTime parses a host date; a date without a zone is UTC.
func parseHostTime(s string) (time.Time, bool) {
	for _, layout := range hostTimeLayouts {
		if t, err := time.ParseInLocation(layout, s, time.UTC); err == nil {
			return t.UTC(), true
		}
	}
	return time.Time{}, false
}

// readKeys are the metadata keys the handler reads. When the trigger value is
// a string holding a JSON object, the host copies the body's top-level
// members into Metadata over the keys of the same name (docs/host-wire-format.md §1.4), so a
// body member named like one of these (in any case, as the comparison there
// is unconfirmed) would forge the delivery count, message id, type or
// enqueue time. Other metadata keys are never read, so bodies may use their
// names ("to", "client", …).
var readKeys = []string{"DeliveryCount", "MessageId", "Subject", "Label", "EnqueuedTimeUtc"}

// quotedSystemKeys are the read keys as lower-case JSON strings, for
// mayShadow.
var quotedSystemKeys = func() [][]byte {
	out := make([][]byte, len(readKeys))
	for i, k := range readKeys {
		out[i] = []byte(`"` + strings.ToLower(k) + `"`)
	}
	return out
}()

// mayShadow is a cheap test that clears almost every body without parsing
// it: a member can shadow a system key only if the key's name appears in the
// text in some case. Escapes and non-ASCII text (which case folding could
// turn into a key's name) always go to the full check.
func mayShadow(body []byte) bool {
	for _, c := range body {
		if c >= utf8.RuneSelf || c == '\\' {
			return true
		}
	}
	lower := bytes.ToLower(body)
	for _, k := range quotedSystemKeys {
		if bytes.Contains(lower, k) {
			return true
		}
	}
	return false
}

// shadowedKeys returns the top-level members of a JSON object body that share
// a name (in any case) with a metadata key the handler reads.
func shadowedKeys(body []byte) []string {
	if !mayShadow(body) {
		return nil
	}
	return parseShadowedKeys(body)
}

func parseShadowedKeys(body []byte) []string {
	var top map[string]json.RawMessage
	if json.Unmarshal(body, &top) != nil {
		return nil
	}
	var out []string
	for k := range top {
		for _, sk := range readKeys {
			if strings.EqualFold(k, sk) {
				out = append(out, k)
			}
		}
	}
	sort.Strings(out)
	return out
}
