package hostemu

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/ordersink/orders-consumer/internal/hostjson"
)

// DefaultMaxMessageBytes is the largest message a Service Bus Standard
// namespace takes, headers included.
const DefaultMaxMessageBytes = 256 << 10

// propertyBytes is what the output binding's message adds to its body's size
// in the broker's count: a message id, the content type and AMQP framing.
// An estimate; the broker's exact count is not public.
const propertyBytes = 256

// OutputMessage is one item an output binding wrote.
type OutputMessage struct {
	Binding string // binding name in function.json
	Type    string // binding type, e.g. serviceBus
	Entity  string // queue or topic for Service Bus
	// ContentType and Text are the message as the binding sends it: for
	// Service Bus, text/plain and the item's ToString().
	ContentType string
	Text        string
	// Base64Trap is set when the value was a string that happens to be valid
	// base64: the host decoded it to bytes before binding, and a Service Bus
	// output then sends the text "System.Byte[]".
	Base64Trap bool
}

// bindOutputs turns an answer's Outputs into what each output binding of the
// function writes (docs/host-wire-format.md §2.4). It also returns the Outputs keys that name
// no output binding, which the host ignores.
func bindOutputs(fn *Function, a Answer) (items []OutputMessage, ignored []string, err error) {
	declared := map[string]bool{}
	for _, b := range fn.Outputs() {
		declared[b.Name] = true
		if strings.EqualFold(b.Type, "http") {
			continue
		}
		value, ok := a.Outputs[b.Name]
		if b.Name == "$return" {
			value, ok = a.ReturnValue, len(a.ReturnValue) > 0
		}
		value = bytes.TrimSpace(value)
		if !ok || len(value) == 0 || string(value) == "null" {
			continue
		}
		got, err := bindValue(b, value)
		if err != nil {
			return nil, nil, fmt.Errorf("output binding %s: %w", b.Name, err)
		}
		items = append(items, got...)
	}
	for k := range a.Outputs {
		if !declared[k] {
			ignored = append(ignored, k)
		}
	}
	sort.Strings(ignored)
	return items, ignored, nil
}

func bindValue(b Binding, value json.RawMessage) ([]OutputMessage, error) {
	item := func(text string) OutputMessage {
		m := OutputMessage{Binding: b.Name, Type: b.Type, Entity: b.Entity(), Text: text}
		if strings.EqualFold(b.Type, "serviceBus") {
			m.ContentType = "text/plain"
		}
		return m
	}
	if value[0] == '"' && !b.Binary() {
		var s string
		if err := json.Unmarshal(value, &s); err != nil {
			return nil, err
		}
		if _, ok := netBase64(s); ok {
			// A byte[] is not enumerated; the string collector gets its
			// ToString(), which is the type name.
			m := item("System.Byte[]")
			m.Base64Trap = true
			return []OutputMessage{m}, nil
		}
		if isJSONText(s) {
			// The collector parses strings that look like JSON first.
			if !json.Valid([]byte(s)) {
				return nil, fmt.Errorf("the string looks like JSON but does not parse: %s", truncate(s, 100))
			}
			value = json.RawMessage(strings.TrimSpace(s))
		} else {
			return []OutputMessage{item(s)}, nil
		}
	}
	var elems []json.RawMessage
	if value[0] == '[' {
		if err := json.Unmarshal(value, &elems); err != nil {
			return nil, err
		}
	} else {
		elems = []json.RawMessage{value}
	}
	out := make([]OutputMessage, 0, len(elems))
	for _, e := range elems {
		text, err := itemText(e)
		if err != nil {
			return nil, err
		}
		out = append(out, item(text))
	}
	return out, nil
}

// itemText is the item's ToString() as the string collector sends it:
// objects and arrays as Newtonsoft's indented JSON, with its string escaping
// and its date and number re-printing (hostjson), strings as they are (or
// re-indented when they hold JSON), other scalars as .NET prints them.
func itemText(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	switch raw[0] {
	case '{', '[':
		b, err := hostjson.Indent(raw)
		return string(b), err
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", err
		}
		if isJSONText(s) && json.Valid([]byte(s)) {
			return itemText(json.RawMessage(s))
		}
		return s, nil
	case 't':
		return "True", nil
	case 'f':
		return "False", nil
	}
	if s, ok := hostjson.NumberString(string(raw)); ok {
		return s, nil
	}
	return string(raw), nil
}

// isJSONText is Utility.IsJson: the trimmed text starts with { and ends with
// }, or starts with [ and ends with ].
func isJSONText(s string) bool {
	t := strings.TrimSpace(s)
	return len(t) >= 2 && (t[0] == '{' && t[len(t)-1] == '}' || t[0] == '[' && t[len(t)-1] == ']')
}

// netBase64 is Convert.FromBase64String: white space is ignored, the rest
// must be whole groups of four base64 characters with optional padding. The
// empty string is valid base64 for .NET.
func netBase64(s string) ([]byte, bool) {
	stripped := strings.Map(func(r rune) rune {
		switch r {
		case ' ', '\t', '\r', '\n':
			return -1
		}
		return r
	}, s)
	if len(stripped)%4 != 0 {
		return nil, false
	}
	b, err := base64.StdEncoding.DecodeString(stripped)
	return b, err == nil
}

// checkSize is the broker's refusal of a message over the size limit
// (MessageSizeExceeded), which fails the invocation after the handler's 2xx.
func (m OutputMessage) checkSize(limit int) error {
	if n := len(m.Text) + propertyBytes; n > limit {
		return fmt.Errorf("output binding %s: sending to %s failed: the message is %d bytes with its properties, over the limit of %d (MessageSizeExceeded)", m.Binding, m.Entity, n, limit)
	}
	return nil
}
