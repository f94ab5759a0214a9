package orders

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
)

// Payload is a submitted body read for its fingerprint alone, before any rule
// of docs/contract.md §3 judges it: what an HTTP submission's Idempotency-Key
// binds. Reading it applies no rule that a setting or a later release may
// change, so a retry finds its key's stored answer whatever the rules say by
// then ([Processor.Admit] applies them, inside the key's work).
//
// The body limits decodeObject checks are part of fingerprint version 1:
// tightening one changes which bodies it can fingerprint canonically, and
// so needs a new [HashVersion].
type Payload struct {
	// Hash is the fingerprint under [HashVersion]: the order's (§4) when the
	// body is a JSON object the rule can canonicalise, else
	// "sha256-bytes:" and the hex SHA-256 of the body as sent (such a body is
	// refused, and only its exact bytes get that refusal again).
	Hash string
	// OrderID is the body's orderId when it has a string one, else "".
	OrderID string
	body    []byte
	fields  map[string]json.RawMessage // nil when the body is not an order object
	err     error                      // why not: the rules refuse it as malformed
}

// ReadPayload reads a submitted body for its fingerprint. It never fails: a
// body that is no order object gets the fingerprint of its bytes, and
// [Processor.Admit] refuses it.
func ReadPayload(body []byte) *Payload {
	p := &Payload{body: body}
	fields, err := decodeObject(body)
	if err == nil {
		p.Hash, err = fingerprint(fields, HashVersion)
	}
	if err != nil {
		p.err, p.Hash, p.OrderID = err, bytesHash(body), PeekOrderID(body)
		return p
	}
	p.fields = fields
	_ = json.Unmarshal(fields["orderId"], &p.OrderID) // not a string: "", and the rules say why
	return p
}

// HashUnder is the payload's fingerprint under another version of the rule,
// to compare it with a fingerprint stored by an older release.
func (p *Payload) HashUnder(version int) (string, error) {
	if version == HashVersion {
		return p.Hash, nil
	}
	if p.fields == nil {
		return bytesHash(p.body), nil
	}
	return fingerprint(p.fields, version)
}

// bytesHash fingerprints a body that is no order object by its bytes.
func bytesHash(body []byte) string {
	sum := sha256.Sum256(body)
	return "sha256-bytes:" + hex.EncodeToString(sum[:])
}

// order is the payload as an order, validated by the rules of §3 as
// [ParseOrder] validates a message body.
func (p *Payload) order() (*Order, error) {
	if p.err != nil {
		return nil, p.err
	}
	o := &Order{fields: p.fields, Hash: p.Hash}
	if err := o.validate(); err != nil {
		return nil, err
	}
	return o, nil
}
