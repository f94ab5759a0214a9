package orders

import (
	"bytes"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

// Change is one difference between a stored order and another body sent
// with its orderId (a HashMismatch), at Path, an RFC 6901 JSON Pointer. Each
// value is its RFC 8785 canonical JSON cut to MaxChangeValue bytes; "" where
// that side has no such member or element.
type Change struct {
	Path     string `json:"path"`
	Stored   string `json:"stored,omitempty"`
	Incoming string `json:"incoming,omitempty"`
}

// String is the change as an operator reads it: "/lines/2/quantity: 2 → 3".
func (c Change) String() string {
	return c.Path + ": " + orAbsent(c.Stored) + " → " + orAbsent(c.Incoming)
}

func orAbsent(v string) string {
	if v == "" {
		return "(absent)"
	}
	return v
}

// Diff is what differs between a stored order and another body.
type Diff struct {
	// Changes are in document order: members by name, elements by index.
	Changes []Change `json:"changes"`
	// More counts the differences beyond the limit, found but not listed.
	More int `json:"more,omitempty"`
}

// MaxChangeValue bounds each value a Change shows, in bytes: an operator
// reads which member changed, and `ordersctl parked show` has the whole body.
const MaxChangeValue = 120

// DiffStored compares a stored order document (docs/contract.md §5) with
// body as the fingerprint does (§4): each in its canonical form without
// "meta", the stored document without the members it adds for itself
// (id, type, requestHash… and Cosmos DB's "_" members). So two bodies with
// one fingerprint have no changes, and a HashMismatch has at least one.
// Arrays are compared element by element: an element inserted early shows
// as a change of every one after it. At most limit changes are listed;
// both inputs pass the body limits of [ParseOrder] (MaxValues…), which
// bound the work.
func DiffStored(storedDoc, body []byte, limit int) (*Diff, error) {
	stored, err := decodeObject(storedDoc)
	if err != nil {
		return nil, fmt.Errorf("stored order: %w", err)
	}
	for name := range stored {
		if reserved[name] || strings.HasPrefix(name, "_") {
			delete(stored, name)
		}
	}
	incoming, err := decodeObject(body)
	if err != nil {
		return nil, fmt.Errorf("body: %w", err)
	}
	a, err := canonicalForm(stored)
	if err != nil {
		return nil, fmt.Errorf("stored order: %w", err)
	}
	b, err := canonicalForm(incoming)
	if err != nil {
		return nil, fmt.Errorf("body: %w", err)
	}
	d := &Diff{Changes: []Change{}}
	if err := d.compare(limit, "", a, b); err != nil {
		return nil, err
	}
	return d, nil
}

// compare adds the differences between a and b, canonical JSON values at
// path (nil: absent). Canonical forms are equal exactly when the values
// are, so an equal subtree is passed over in one comparison.
func (d *Diff) compare(limit int, path string, a, b jsontext.Value) error {
	if bytes.Equal(a, b) {
		return nil
	}
	switch {
	case a.Kind() == '{' && b.Kind() == '{':
		am, err := objectMembers(a)
		if err != nil {
			return err
		}
		bm, err := objectMembers(b)
		if err != nil {
			return err
		}
		names := make([]string, 0, len(am)+len(bm))
		for n := range am {
			names = append(names, n)
		}
		for n := range bm {
			if _, ok := am[n]; !ok {
				names = append(names, n)
			}
		}
		sort.Strings(names)
		for _, n := range names {
			if err := d.compare(limit, path+"/"+pointerToken(n), am[n], bm[n]); err != nil {
				return err
			}
		}
	case a.Kind() == '[' && b.Kind() == '[':
		ae, err := arrayElements(a)
		if err != nil {
			return err
		}
		be, err := arrayElements(b)
		if err != nil {
			return err
		}
		for i := range max(len(ae), len(be)) {
			var x, y jsontext.Value
			if i < len(ae) {
				x = ae[i]
			}
			if i < len(be) {
				y = be[i]
			}
			if err := d.compare(limit, path+"/"+strconv.Itoa(i), x, y); err != nil {
				return err
			}
		}
	default:
		if len(d.Changes) >= limit {
			d.More++
			return nil
		}
		d.Changes = append(d.Changes, Change{Path: path, Stored: cut(a), Incoming: cut(b)})
	}
	return nil
}

// objectMembers reads a canonical object's members.
func objectMembers(v jsontext.Value) (map[string]jsontext.Value, error) {
	dec := jsontext.NewDecoder(bytes.NewReader(v))
	if _, err := dec.ReadToken(); err != nil {
		return nil, fmt.Errorf("diff: %w", err)
	}
	out := map[string]jsontext.Value{}
	for dec.PeekKind() != '}' {
		tok, err := dec.ReadToken()
		if err != nil {
			return nil, fmt.Errorf("diff: %w", err)
		}
		name := tok.String() // before the next read voids tok
		val, err := dec.ReadValue()
		if err != nil {
			return nil, fmt.Errorf("diff: %w", err)
		}
		out[name] = val.Clone()
	}
	return out, nil
}

// arrayElements reads a canonical array's elements.
func arrayElements(v jsontext.Value) ([]jsontext.Value, error) {
	dec := jsontext.NewDecoder(bytes.NewReader(v))
	if _, err := dec.ReadToken(); err != nil {
		return nil, fmt.Errorf("diff: %w", err)
	}
	var out []jsontext.Value
	for dec.PeekKind() != ']' {
		val, err := dec.ReadValue()
		if err != nil {
			return nil, fmt.Errorf("diff: %w", err)
		}
		out = append(out, val.Clone())
	}
	return out, nil
}

// pointerToken escapes a member name for a JSON Pointer (RFC 6901 §3).
func pointerToken(name string) string {
	return strings.ReplaceAll(strings.ReplaceAll(name, "~", "~0"), "/", "~1")
}

// cut is v as text of at most MaxChangeValue bytes, whole runes, "…" where
// it was cut.
func cut(v jsontext.Value) string {
	if len(v) <= MaxChangeValue {
		return string(v)
	}
	n := MaxChangeValue - len("…")
	for n > 0 && !utf8.RuneStart(v[n]) {
		n--
	}
	return string(v[:n]) + "…"
}
