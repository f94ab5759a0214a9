package idempotency

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
)

// Scope is what an idempotency key belongs to: the client that sent it and
// the operation it guards. Two clients, or two operations, never share a key.
type Scope struct {
	Client    string // who sent the key: "principal:…", "key:…" or "anonymous"
	Operation string // what the key guards, such as "SubmitOrder"
	Key       string // the Idempotency-Key as the client sent it, unquoted
}

// ID is the record id of the scope: the hex SHA-256 of client, operation and
// key, each prefixed by its length, so no two scopes share an id ("a"+"bc"
// and "ab"+"c" differ) and the id is safe as a Cosmos DB id whatever the key
// holds ('/', '#', '?' and '\' are not allowed in ids). It also keeps the key
// out of logs and error texts, which name the id instead.
func (s Scope) ID() string {
	h := sha256.New()
	for _, part := range []string{s.Client, s.Operation, s.Key} {
		_, _ = h.Write(binary.BigEndian.AppendUint64(nil, uint64(len(part))))
		_, _ = h.Write([]byte(part))
	}
	return hex.EncodeToString(h.Sum(nil))
}

func (s Scope) check() error {
	if s.Operation == "" || s.Key == "" {
		return errors.New("idempotency: a scope needs an operation and a key")
	}
	return nil
}
