package hostemu

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/ordersink/orders-consumer/internal/hostjson"
)

// The host writes every request with Newtonsoft.Json, and handlers decode the
// inner, second encoding themselves, so the inner strings must be byte for
// byte what Newtonsoft writes: Go's encoding/json escapes <, > and & and
// leaves U+0085 alone, Newtonsoft does the opposite.

// quote returns s as a JSON string literal the way Newtonsoft writes it.
func quote(s string) []byte { return hostjson.AppendQuote(nil, s) }

// jsonObject is a JSON object that keeps its members in insertion order.
type jsonObject struct {
	keys []string
	vals map[string][]byte
}

func newObject() *jsonObject { return &jsonObject{vals: map[string][]byte{}} }

// set adds or replaces a member; raw is a JSON value.
func (o *jsonObject) set(key string, raw []byte) {
	if _, ok := o.vals[key]; !ok {
		o.keys = append(o.keys, key)
	}
	o.vals[key] = raw
}

// setFold replaces a member whose name equals key in any case, keeping the
// existing spelling, the way a .NET dictionary with an OrdinalIgnoreCase
// comparer does; otherwise it adds one.
func (o *jsonObject) setFold(key string, raw []byte) {
	if k, ok := o.keyFold(key); ok {
		key = k
	}
	o.set(key, raw)
}

// addFold adds a member unless one of that name in any case is there
// already (the extension's "if !bindingData.ContainsKey").
func (o *jsonObject) addFold(key string, raw []byte) {
	if _, ok := o.keyFold(key); !ok {
		o.set(key, raw)
	}
}

// keyFold is the spelling of the member whose name equals key in any case.
func (o *jsonObject) keyFold(key string) (string, bool) {
	i := slices.IndexFunc(o.keys, func(k string) bool { return strings.EqualFold(k, key) })
	if i < 0 {
		return "", false
	}
	return o.keys[i], true
}

// deleteFunc removes the members whose name drop reports.
func (o *jsonObject) deleteFunc(drop func(key string) bool) {
	o.keys = slices.DeleteFunc(o.keys, func(k string) bool {
		if drop(k) {
			delete(o.vals, k)
			return true
		}
		return false
	})
}

// MarshalJSON writes the members compactly in insertion order.
func (o *jsonObject) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(quote(k))
		b.WriteByte(':')
		b.Write(o.vals[k])
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

func (o *jsonObject) bytes() []byte { b, _ := o.MarshalJSON(); return b }

// jsonArray writes raw JSON values as a compact array.
func jsonArray(vals [][]byte) []byte {
	return append(append([]byte{'['}, bytes.Join(vals, []byte{','})...), ']')
}

// stringOrNull is a .NET string that may be null ("").
func stringOrNull(s string) []byte {
	if s == "" {
		return []byte("null")
	}
	return quote(s)
}

// .NET date shapes on the wire.
const (
	// DateTime.Parse(value.ToString()) of the single-message path: seconds, no zone.
	layoutHostDate       = "2006-01-02T15:04:05"
	layoutHostDateOffset = "2006-01-02T15:04:05-07:00"
	// Newtonsoft's IsoDateTimeConverter ("yyyy-MM-ddTHH:mm:ss.FFFFFFFK"):
	// up to seven fraction digits, trailing zeros dropped.
	layoutNetISO       = "2006-01-02T15:04:05.9999999"
	layoutNetISOOffset = "2006-01-02T15:04:05.9999999-07:00"
	// DateTime.ToString(CultureInfo.InvariantCulture), the "G" pattern.
	layoutNetInvariant = "01/02/2006 15:04:05"
)

// netTicks truncates t to .NET's 100 ns resolution.
func netTicks(t time.Time) time.Time { return t.Truncate(100 * time.Nanosecond) }

// maxDateTime is DateTime.MaxValue, the expiry of a message without a TTL.
var maxDateTime = time.Date(9999, 12, 31, 23, 59, 59, 999999900, time.UTC)

// bindingDataValue converts a top-level member of a JSON body the way the host
// does before it adds it to Metadata (Utility.ApplyBindingData): objects stay
// objects, null and arrays are dropped, every other value becomes the .NET
// string of the JToken Newtonsoft parsed, which is then JSON-encoded like any
// string. ok is false when the member is dropped.
func bindingDataValue(raw json.RawMessage) (out []byte, ok bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil, false
	}
	switch raw[0] {
	case '{':
		var c bytes.Buffer
		if json.Compact(&c, raw) != nil {
			return nil, false
		}
		return c.Bytes(), true
	case '[', 'n':
		return nil, false
	case 't':
		return quote(quoteString("True")), true
	case 'f':
		return quote(quoteString("False")), true
	case '"':
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return nil, false
		}
		// JObject.Parse reads ISO 8601 strings as DateTime (DateParseHandling
		// defaults to DateTime), and (string)JToken then prints the date in
		// the invariant culture: "2026-11-29T10:00:00Z" arrives as
		// "11/29/2026 10:00:00". Offsets are converted to the host's local
		// time, which is UTC on Azure.
		if t, ok := parseNetISODate(s); ok {
			s = t.Format(layoutNetInvariant)
		}
		return quote(quoteString(s)), true
	default:
		s, ok := hostjson.NumberString(string(raw))
		if !ok {
			return nil, false
		}
		return quote(quoteString(s)), true
	}
}

// quoteString is JsonConvert.SerializeObject of a string.
func quoteString(s string) string { return string(quote(s)) }

// parseNetISODate recognises the strings Newtonsoft's reader turns into dates:
// yyyy-MM-ddTHH:mm:ss with optional fraction and optional Z or offset.
func parseNetISODate(s string) (time.Time, bool) {
	if len(s) < len("2006-01-02T15:04:05") || s[10] != 'T' {
		return time.Time{}, false
	}
	for _, layout := range []string{"2006-01-02T15:04:05.999999999Z07:00", "2006-01-02T15:04:05.999999999", "2006-01-02T15:04:05.999999999Z0700"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), true
		}
	}
	return time.Time{}, false
}
