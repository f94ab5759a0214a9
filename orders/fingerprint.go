package orders

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/gowebpki/jcs"
)

// HashVersion is the fingerprint rule this build computes (docs/contract.md §4). It is
// stored beside every hash so that a future rule can still recognise
// duplicates of orders accepted under an older one.
const HashVersion = 1

// Fingerprint computes the request fingerprint of a body under the given rule
// version. Version 1 is "sha256:" + hex SHA-256 of the RFC 8785 (JCS) canonical
// form of the body without its top-level "meta" member.
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
		key, _ := json.Marshal(k) // a string always marshals
		b.Write(key)
		b.WriteByte(':')
		b.Write(fields[k])
	}
	b.WriteByte('}')
	// JCS sorts keys by UTF-16 code units, normalises numbers and strings and
	// rejects duplicate keys at every depth.
	canonical, err := jcs.Transform(b.Bytes())
	if err != nil {
		return "", malformed("body cannot be canonicalised (RFC 8785): %v", err)
	}
	sum := sha256.Sum256(canonical)
	return "sha256:" + hex.EncodeToString(sum[:]), nil
}
