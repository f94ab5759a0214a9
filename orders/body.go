package orders

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

// Limits on a message body (docs/contract.md §3). ParseOrder runs before and
// outside any operation timeout, and every redelivery and duplicate pays for
// it again, so the walk that enforces them stops at the first breach, before
// the canonical form, validation or any store call. Real orders stay far
// below each: three levels, a dozen members, strings of a few dozen bytes.
const (
	// MaxDepth bounds nesting; hostile depth costs recursion in every
	// parser the body meets later (the host, Cosmos DB, consumers).
	MaxDepth = 32
	// MaxMembers bounds the members of one object. Canonicalisation sorts
	// each object's names, so with this bound its cost stays linear in the
	// body: n·log(MaxMembers), not n·log(n).
	MaxMembers = 1000
	// MaxTokenBytes bounds one string, name or number as written, escapes
	// included, quotes not.
	MaxTokenBytes = 64 << 10
	// MaxValues bounds the JSON values in a body (objects, arrays, strings,
	// numbers, literals; names not counted): more than twenty times the
	// largest valid order (100 lines, about 410 values). It bounds the work
	// of every later pass over the body: validation, the stored document,
	// the outbox event and the host's re-serialisation of outputs.
	MaxValues = 10_000
)

// decodeObject reads a JSON object into its members, refusing what other
// parsers would read differently (invalid UTF-8, lone surrogates, duplicate
// names, numbers a binary64 does not hold as written, trailing data) and what
// breaks a limit above. It is one linear pass.
func decodeObject(body []byte) (map[string]json.RawMessage, error) {
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return nil, malformed("body is empty")
	}
	if !utf8.Valid(body) {
		return nil, malformed("body is not valid UTF-8")
	}
	dec := jsontext.NewDecoder(bytes.NewReader(body))
	if k := dec.PeekKind(); k != '{' {
		if k == 0 || !json.Valid(body) {
			return nil, malformed("body is not valid JSON")
		}
		return nil, malformed("body is JSON but not an object: an order is a JSON object")
	}
	w := walk{dec: dec, body: body, fields: make(map[string]json.RawMessage, 8)}
	if err := w.run(); err != nil {
		return nil, err
	}
	if _, err := dec.ReadToken(); !errors.Is(err, io.EOF) {
		return nil, malformed("body has data after the JSON object")
	}
	return w.fields, nil
}

// walk is one pass over a body's tokens that checks the limits and collects
// the top-level members.
type walk struct {
	dec    *jsontext.Decoder
	body   []byte
	values int
	fields map[string]json.RawMessage
	name   string // the top-level name whose value is being read
	start  int64  // where that value starts (before the ':')
}

func (w *walk) run() error {
	for {
		kind := w.dec.PeekKind()
		if kind == '}' || kind == ']' {
			if _, err := w.dec.ReadToken(); err != nil {
				return syntaxError(err)
			}
		} else if err := w.value(kind); err != nil {
			return err
		}
		if w.dec.StackDepth() == 0 {
			return nil
		}
		w.member()
	}
}

// value reads the next name, leaf value or the start of an object or array.
func (w *walk) value(kind jsontext.Kind) error {
	isName := w.atName()
	if kind == '{' || kind == '[' {
		if _, err := w.dec.ReadToken(); err != nil {
			return syntaxError(err)
		}
		if d := w.dec.StackDepth(); d > MaxDepth {
			return w.breach("depth limit", "it nests deeper than %d levels", MaxDepth)
		}
	} else {
		raw, err := w.dec.ReadValue()
		if err != nil {
			return syntaxError(err)
		}
		n := len(raw)
		if kind == '"' {
			n -= 2 // the quotes
		}
		if n > MaxTokenBytes {
			return w.breach("string length limit", "a string, name or number is %d bytes long as written "+
				"(quotes not counted); at most %d are allowed", n, MaxTokenBytes)
		}
		if kind == '0' && !exactBinary64(raw) {
			return w.breach("I-JSON number rule", "the number %s changes when read as an IEEE 754 double; "+
				"send it as a string or as the double it becomes (RFC 7493 §2.2)", truncate(string(raw), 40))
		}
		if isName && w.dec.StackDepth() == 1 {
			name, err := jsontext.AppendUnquote(nil, raw)
			if err != nil {
				return syntaxError(err)
			}
			w.name, w.start = string(name), w.dec.InputOffset()
		}
	}
	if !isName {
		if w.values++; w.values > MaxValues {
			return w.breach("value count limit", "it holds more than %d JSON values", MaxValues)
		}
	}
	if k, n := w.dec.StackIndex(w.dec.StackDepth()); k == '{' && n > 2*MaxMembers {
		return w.breach("member limit", "an object has more than %d members", MaxMembers)
	}
	return nil
}

// atName reports whether the next token is an object member's name.
func (w *walk) atName() bool {
	k, n := w.dec.StackIndex(w.dec.StackDepth())
	return k == '{' && n%2 == 0
}

// member keeps a top-level member once its value is complete: its text as
// sent, so the stored document and the fingerprint see what the producer
// wrote. It is a copy, as the caller may reuse the body's buffer.
func (w *walk) member() {
	if w.dec.StackDepth() != 1 || !w.atName() || w.start == 0 {
		return
	}
	raw := bytes.TrimLeft(w.body[w.start:w.dec.InputOffset()], " \t\r\n:")
	w.fields[w.name] = json.RawMessage(bytes.Clone(raw))
	w.name, w.start = "", 0
}
