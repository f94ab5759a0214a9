package orders

// The fingerprint code of hashVersion 1 as it was before the canonicaliser
// became jsontext (docs/adr/0001-dedup-key-and-fingerprint.md): kept only as
// the oracle of FuzzFingerprintMatchesJCS, which proves that every body both
// accept hashes the same. Do not fix it; its flaws are what the new code
// refuses.

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"sort"
	"unicode/utf8"

	"github.com/gowebpki/jcs"
)

// jcsFingerprint is Fingerprint(body, 1) before jsontext.
func jcsFingerprint(body []byte) (string, error) {
	fields, err := jcsDecodeObject(body)
	if err != nil {
		return "", err
	}
	names := make([]string, 0, len(fields))
	for k := range fields {
		if k != "meta" {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range names {
		if i > 0 {
			b.WriteByte(',')
		}
		key, _ := json.Marshal(k)
		b.Write(key)
		b.WriteByte(':')
		b.Write(fields[k])
	}
	b.WriteByte('}')
	canonical, err := jcs.Transform(b.Bytes())
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(canonical)
	return "sha256:" + hex.EncodeToString(sum[:]), nil
}

// jcsDecodeObject reads a JSON object into its members, refusing what other
// parsers would read differently: invalid UTF-8, duplicate keys, trailing data
// and excessive nesting.
func jcsDecodeObject(body []byte) (map[string]json.RawMessage, error) {
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return nil, malformed("body is empty")
	}
	if !utf8.Valid(body) {
		return nil, malformed("body is not valid UTF-8")
	}
	if d := jcsDepth(body); d > 32 {
		return nil, malformed("body nests deeper than %d levels", 32)
	}
	if body[0] != '{' {
		if !json.Valid(body) {
			return nil, malformed("body is not valid JSON")
		}
		return nil, malformed("body is JSON but not an object: an order is a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if _, err := dec.Token(); err != nil {
		return nil, malformed("body is not valid JSON: %v", err)
	}
	fields := make(map[string]json.RawMessage, 8)
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, malformed("body is not valid JSON: %v", err)
		}
		key := tok.(string) // inside an object the decoder only yields string keys
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, malformed("body is not valid JSON: %v", err)
		}
		if _, dup := fields[key]; dup {
			return nil, malformed("body has the key %q twice; parsers disagree on which one counts", key)
		}
		fields[key] = raw
	}
	if _, err := dec.Token(); err != nil {
		return nil, malformed("body is not valid JSON: %v", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, malformed("body has data after the JSON object")
	}
	return fields, nil
}

// jcsDepth returns the deepest nesting of objects and arrays in a JSON text,
// ignoring brackets inside strings.
func jcsDepth(b []byte) int {
	d, maxD, inString, escaped := 0, 0, false, false
	for _, c := range b {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			d++
			maxD = max(maxD, d)
		case c == '}' || c == ']':
			d--
		}
	}
	return maxD
}
