package handler

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// jsonArray reads a value the host sends as a JSON array: normally a JSON
// string holding the array text (every non-object value is JSON-encoded once
// more, docs/host-wire-format.md §1.2), sometimes that string encoded once again, and, from
// other tools, a real array. null or an absent key is an empty array.
func jsonArray(raw json.RawMessage) ([]json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	for range 2 {
		if len(raw) == 0 || raw[0] != '"' {
			break
		}
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, fmt.Errorf("not a JSON string: %v", err)
		}
		raw = bytes.TrimSpace([]byte(s))
	}
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	if raw[0] != '[' {
		return nil, fmt.Errorf("not a JSON array")
	}
	var out []json.RawMessage
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, fmt.Errorf("not a JSON array: %v", err)
	}
	return out, nil
}

// batchBodies returns the message bodies of a "cardinality": "many" trigger:
// Data.<binding> is a JSON string holding a JSON array of strings, base64 of
// the exact bytes for "dataType": "binary" (as shipped), the body texts for
// "dataType": "string". Each element is decoded by the rule of a single
// message's trigger value (unwrapText), so both functions read every body
// shape alike. Elements that are objects (a tool that did not encode them)
// are taken as the body itself.
func (inv *invocation) batchBodies(binding string) ([][]byte, error) {
	elems, err := inv.dataArray(binding)
	if err != nil {
		return nil, err
	}
	bodies := make([][]byte, len(elems))
	for i, e := range elems {
		e = bytes.TrimSpace(e)
		switch {
		case len(e) == 0 || string(e) == "null":
			bodies[i] = nil
		case e[0] == '"':
			var s string
			if err := json.Unmarshal(e, &s); err != nil {
				return nil, fmt.Errorf("%w: Data.%s[%d] is not a JSON string: %v", errEnvelope, binding, i, err)
			}
			bodies[i], _ = unwrapText(s)
		default:
			bodies[i] = e
		}
	}
	return bodies, nil
}

// dataArray reads a trigger value that holds a list (jsonArray).
func (inv *invocation) dataArray(binding string) ([]json.RawMessage, error) {
	raw, ok := inv.Data[binding]
	if !ok {
		return nil, fmt.Errorf("%w: Data has no %q member (the trigger binding name in function.json)", errEnvelope, binding)
	}
	elems, err := jsonArray(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: Data.%s is %v", errEnvelope, binding, err)
	}
	return elems, nil
}

// metaArray reads a batch metadata value such as MessageIdArray. Absent keys
// and undecodable values give nil: metadata only enriches a delivery.
func metaArray(raw json.RawMessage) []json.RawMessage {
	if raw == nil {
		return nil
	}
	elems, err := jsonArray(raw)
	if err != nil {
		return nil
	}
	return elems
}

// metaStrings reads a metadata array of strings; null elements and elements
// past the end are "".
func metaStrings(raw json.RawMessage, n int) []string {
	elems := metaArray(raw)
	out := make([]string, n)
	for i := 0; i < n && i < len(elems); i++ {
		out[i] = elementText(elems[i])
	}
	return out
}

// metaInts reads a metadata array of integers such as DeliveryCountArray;
// unreadable elements are 0.
func metaInts(raw json.RawMessage, n int) []int {
	out := make([]int, n)
	for i, s := range metaStrings(raw, n) {
		out[i], _ = strconv.Atoi(strings.TrimSpace(s))
	}
	return out
}

// elementText returns a string element's value, a number's text, and "" for
// null.
func elementText(e json.RawMessage) string {
	e = bytes.TrimSpace(e)
	if len(e) == 0 || string(e) == "null" {
		return ""
	}
	if e[0] == '"' {
		var s string
		if json.Unmarshal(e, &s) == nil {
			return s
		}
	}
	return string(e)
}

// batchDeliveries splits a batch invocation into one delivery per message,
// with the metadata the ...Array keys give each one, in message order.
func batchDeliveries(inv *invocation, invocationID string) ([]delivery, error) {
	bodies, err := inv.batchBodies(BatchTriggerBinding)
	if err != nil {
		return nil, err
	}
	n := len(bodies)
	md := &inv.Metadata
	ids := metaStrings(md.MessageIdArray, n)
	counts := metaInts(md.DeliveryCountArray, n)
	subjects := metaStrings(md.SubjectArray, n)
	for i, label := range metaStrings(md.LabelArray, n) {
		if subjects[i] == "" {
			subjects[i] = label // extension 4.x names it Label
		}
	}
	enqueued := metaStrings(md.EnqueuedTimeUtcArray, n)
	out := make([]delivery, n)
	for i := range bodies {
		out[i] = delivery{
			function: FunctionProcessOrderBatch, invocationID: invocationID,
			messageID: ids[i], deliveryCount: counts[i], subject: subjects[i], body: bodies[i],
		}
		if t, ok := parseHostTime(enqueued[i]); ok {
			out[i].enqueuedAt = t.Format(time.RFC3339Nano)
		}
		out[i].unwrapRequeued()
	}
	return out, nil
}
