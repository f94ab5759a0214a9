package orders

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/go-json-experiment/json/jsontext"
)

// HashVersion is the fingerprint rule this build computes (docs/contract.md §4). It is
// stored beside every hash so that a future rule can still recognise
// duplicates of orders accepted under an older one.
const HashVersion = 1

// Fingerprint computes the request fingerprint of a body under the given rule
// version. Version 1 is "sha256:" + hex SHA-256 of the RFC 8785 (JCS) canonical
// form of the body without its top-level "meta" member.
// Pattern: Request fingerprint (docs/design-patterns.md#request-fingerprint).
func Fingerprint(body []byte, version int) (string, error) {
	fields, err := decodeObject(body)
	if err != nil {
		return "", err
	}
	return fingerprint(fields, version)
}

func fingerprint(fields map[string]json.RawMessage, version int) (string, error) {
	if version != 1 {
		return "", fmt.Errorf("fingerprint: unknown hashVersion %d", version)
	}
	canonical, err := canonicalForm(fields)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(canonical)
	return "sha256:" + hex.EncodeToString(sum[:]), nil
}

// canonicalForm is what version 1 hashes (and DiffStored compares): the
// RFC 8785 form of the object of fields without its top-level "meta".
func canonicalForm(fields map[string]json.RawMessage) (jsontext.Value, error) {
	// Member order does not matter here: Canonicalize sorts.
	var b bytes.Buffer
	b.WriteByte('{')
	for k, raw := range fields {
		if k == "meta" {
			continue
		}
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		key, _ := json.Marshal(k) // a string always marshals
		b.Write(key)
		b.WriteByte(':')
		b.Write(raw)
	}
	b.WriteByte('}')
	// Canonicalize sorts names by UTF-16 code units and writes numbers and
	// strings in their RFC 8785 form. decodeObject has already refused what
	// RFC 8785 cannot represent faithfully (ijson.go) and duplicate names,
	// and bounded the sort; checking names again would only cost a second
	// map per object.
	canonical := jsontext.Value(b.Bytes())
	if err := canonical.Canonicalize(jsontext.AllowDuplicateNames(true)); err != nil {
		return nil, malformed("body cannot be canonicalised (RFC 8785): %v", err)
	}
	return canonical, nil
}
