package hostemu

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"strconv"
	"time"
	"unicode/utf8"
)

// Encoder writes invocation requests exactly as the Functions host does for a
// Service Bus trigger (docs/host-wire-format.md §1.2-1.6).
type Encoder struct {
	// Namespace is the Client's FullyQualifiedNamespace.
	Namespace string
	// ClientID is the Client's Identifier.
	ClientID string
	// Now and NewGUID feed sys.UtcNow and sys.RandGuid (nil: the clock and
	// random GUIDs).
	Now     func() time.Time
	NewGUID func() string
}

// Single encodes the invocation of a single-message function.
func (e *Encoder) Single(fn *Function, d Delivery) ([]byte, error) {
	trigger := fn.Trigger()
	m := d.Message
	data := newObject()
	data.set(trigger.Name, triggerValue(trigger, m.Body))

	md := e.actionsAndClient()
	md.set("DeliveryCount", quote(strconv.Itoa(d.DeliveryCount)))
	md.set("LockToken", quote(quoteString(d.LockToken)))
	// Single DateTime values go through DateTime.Parse(value.ToString()):
	// whole seconds, and the zone of a DateTime is lost.
	md.set("ExpiresAtUtc", quote(m.expiresAt().UTC().Format(layoutHostDate)))
	md.set("ExpiresAt", quote(m.expiresAt().UTC().Format(layoutHostDateOffset)))
	md.set("EnqueuedTimeUtc", quote(m.EnqueuedTime.UTC().Format(layoutHostDate)))
	md.set("EnqueuedTime", quote(m.EnqueuedTime.UTC().Format(layoutHostDateOffset)))
	md.set("MessageId", quote(quoteString(m.MessageID)))
	if m.ContentType != "" {
		md.set("ContentType", quote(quoteString(m.ContentType)))
	}
	if m.Subject != "" {
		md.set("Subject", quote(quoteString(m.Subject)))
		md.set("Label", quote(quoteString(m.Subject)))
	}
	md.set("SequenceNumber", quote(strconv.FormatInt(m.SequenceNumber, 10)))
	if m.CorrelationID != "" {
		md.set("CorrelationId", quote(quoteString(m.CorrelationID)))
	}
	props := applicationProperties(m)
	md.set("ApplicationProperties", props)
	md.set("UserProperties", props)
	md.set("sys", e.sys(fn.Name))
	// The host copies the top-level members of a JSON body into Metadata,
	// over the system keys of the same name (Utility.ApplyBindingData).
	if !trigger.Binary() {
		addBodyMembers(md, []byte(lenientUTF8(m.Body)))
	}
	return envelope(data, md), nil
}

// Batch encodes the invocation of a "cardinality": "many" function.
func (e *Encoder) Batch(fn *Function, ds []Delivery) ([]byte, error) {
	trigger := fn.Trigger()
	bodies := make([][]byte, len(ds))
	for i, d := range ds {
		if trigger.Binary() {
			bodies[i] = quote(base64.StdEncoding.EncodeToString(d.Message.Body))
			continue
		}
		bodies[i] = quote(lenientUTF8(d.Message.Body))
	}
	data := newObject()
	data.set(trigger.Name, quote(string(jsonArray(bodies))))

	md := e.actionsAndClient()
	col := func(key string, elem func(d Delivery) []byte) {
		vals := make([][]byte, len(ds))
		for i, d := range ds {
			vals[i] = elem(d)
		}
		md.set(key, quote(string(jsonArray(vals))))
	}
	null := func(Delivery) []byte { return []byte("null") }
	// Arrays are serialized by Newtonsoft directly: dates keep their
	// fraction here, unlike the single-message path (issue #6997).
	date := func(t time.Time, layout string) []byte { return quote(netTicks(t.UTC()).Format(layout)) }
	col("DeliveryCountArray", func(d Delivery) []byte { return []byte(strconv.Itoa(d.DeliveryCount)) })
	col("DeadLetterSourceArray", null)
	col("LockTokenArray", func(d Delivery) []byte { return quote(d.LockToken) })
	col("ExpiresAtUtcArray", func(d Delivery) []byte { return date(d.Message.expiresAt(), layoutNetISO) })
	col("ExpiresAtArray", func(d Delivery) []byte { return date(d.Message.expiresAt(), layoutNetISOOffset) })
	col("EnqueuedTimeUtcArray", func(d Delivery) []byte { return date(d.Message.EnqueuedTime, layoutNetISO) })
	col("EnqueuedTimeArray", func(d Delivery) []byte { return date(d.Message.EnqueuedTime, layoutNetISOOffset) })
	col("MessageIdArray", func(d Delivery) []byte { return quote(d.Message.MessageID) })
	col("ContentTypeArray", func(d Delivery) []byte { return stringOrNull(d.Message.ContentType) })
	col("ReplyToArray", null)
	col("SequenceNumberArray", func(d Delivery) []byte { return []byte(strconv.FormatInt(d.Message.SequenceNumber, 10)) })
	col("ToArray", null)
	col("SubjectArray", func(d Delivery) []byte { return stringOrNull(d.Message.Subject) })
	col("LabelArray", func(d Delivery) []byte { return stringOrNull(d.Message.Subject) })
	col("CorrelationIdArray", func(d Delivery) []byte { return stringOrNull(d.Message.CorrelationID) })
	col("ApplicationPropertiesArray", func(d Delivery) []byte { return applicationProperties(d.Message) })
	col("UserPropertiesArray", func(d Delivery) []byte { return applicationProperties(d.Message) })
	col("SessionIdArray", null)
	col("ReplyToSessionIdArray", null)
	col("PartitionKeyArray", null)
	col("TransactionPartitionKeyArray", null)
	md.set("sys", e.sys(fn.Name))
	return envelope(data, md), nil
}

// triggerValue is Data.<trigger> of a single-message invocation: the body text
// JSON-encoded twice, or base64 for "dataType": "binary".
func triggerValue(trigger *Binding, body []byte) []byte {
	if trigger.Binary() {
		return quote(base64.StdEncoding.EncodeToString(body))
	}
	return quote(quoteString(lenientUTF8(body)))
}

// lenientUTF8 is the body as a string-bound trigger gets it: the extension
// decodes it with Encoding.UTF8, which does not refuse bytes that are not
// UTF-8 but puts U+FFFD in their place (docs/host-wire-format.md §9), and calls the
// handler. Go's decoder gives one U+FFFD per bad byte; .NET gives one per
// maximal ill-formed subsequence, so a truncated multi-byte sequence may get
// more replacement characters here than there.
func lenientUTF8(body []byte) string {
	if utf8.Valid(body) {
		return string(body)
	}
	return string([]rune(string(body)))
}

// actionsAndClient starts Metadata with the members whose values are objects
// the handler cannot use: the settlement objects arrive as {}.
func (e *Encoder) actionsAndClient() *jsonObject {
	md := newObject()
	for _, k := range []string{"MessageReceiver", "MessageSession", "MessageActions", "SessionActions", "ReceiveActions"} {
		md.set(k, []byte("{}"))
	}
	client := newObject()
	client.set("FullyQualifiedNamespace", quote(e.Namespace))
	client.set("IsClosed", []byte("false"))
	client.set("TransportType", []byte("0"))
	client.set("Identifier", quote(e.ClientID))
	md.set("Client", client.bytes())
	return md
}

func (e *Encoder) sys(function string) []byte {
	now := time.Now
	if e.Now != nil {
		now = e.Now
	}
	s := newObject()
	s.set("MethodName", quote(function))
	s.set("UtcNow", quote(netTicks(now().UTC()).Format(layoutNetISO)+"Z"))
	guid := newGUID
	if e.NewGUID != nil {
		guid = e.NewGUID
	}
	s.set("RandGuid", quote(guid()))
	return s.bytes()
}

func applicationProperties(m *Message) []byte {
	if len(bytes.TrimSpace(m.ApplicationProperties)) == 0 {
		return []byte("{}")
	}
	var c bytes.Buffer
	if json.Compact(&c, m.ApplicationProperties) != nil {
		return []byte("{}")
	}
	return c.Bytes()
}

// addBodyMembers applies docs/host-wire-format.md §1.4 when the body looks like a JSON
// object: Utility.IsJson only checks the first and last characters, and a
// body that then fails to parse adds nothing.
func addBodyMembers(md *jsonObject, body []byte) {
	t := bytes.TrimSpace(body)
	if len(t) < 2 || t[0] != '{' || t[len(t)-1] != '}' {
		return
	}
	members, err := objectMembers(t)
	if err != nil {
		return
	}
	for _, mem := range members {
		if v, ok := bindingDataValue(mem.raw); ok {
			md.setFold(mem.key, v)
		}
	}
}

type member struct {
	key string
	raw json.RawMessage
}

// objectMembers returns the members of a JSON object in document order; a
// repeated key keeps its last value, as JObject.Parse does.
func objectMembers(b []byte) ([]member, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	var out []member
	index := map[string]int{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, err
		}
		if i, ok := index[key]; ok {
			out[i].raw = raw
			continue
		}
		index[key] = len(out)
		out = append(out, member{key: key, raw: raw})
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	return out, nil
}

func envelope(data, md *jsonObject) []byte {
	o := newObject()
	o.set("Data", data.bytes())
	o.set("Metadata", md.bytes())
	return o.bytes()
}
