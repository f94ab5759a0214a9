package httpapi

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/ordersink/orders-consumer/handler"
)

// Request headers of the HTTP API.
const (
	headerIdempotencyKey = "Idempotency-Key"
	// headerPrincipalID is set by App Service Authentication (Easy Auth),
	// which strips any copy the caller sent; without it in front, a caller
	// could send any value (Functions.EasyAuth).
	headerPrincipalID = "X-Ms-Client-Principal-Id"
	// headerReplayed marks a stored answer given again (the IETF draft
	// "The Idempotency-Key HTTP Header Field" and Stripe use this name).
	headerReplayed = "Idempotent-Replayed"
)

// maxIdempotencyKeyLength bounds a key: long enough for any UUID, ULID or
// composite key a client builds, short enough to keep in every record.
const maxIdempotencyKeyLength = 255

// idempotencyKey reads the Idempotency-Key header: 1 to 255 visible ASCII
// characters (0x21-0x7E). The IETF draft defines the field as an RFC 8941
// sf-string ("abc", quotes included); clients also send the bare value, so
// a quoted value is unquoted first and both spellings name the same key.
func idempotencyKey(h http.Header) (string, error) {
	values := h.Values(headerIdempotencyKey)
	switch {
	case len(values) == 0:
		return "", errMissingKey
	case len(values) > 1:
		return "", fmt.Errorf("the header is sent %d times; send it once", len(values))
	}
	key := strings.TrimSpace(values[0])
	if strings.HasPrefix(key, `"`) {
		var err error
		if key, err = unquoteSFString(key); err != nil {
			return "", err
		}
	}
	switch {
	case key == "":
		return "", errors.New("the key is empty")
	case len(key) > maxIdempotencyKeyLength:
		return "", fmt.Errorf("the key is %d characters long; at most %d are allowed", len(key), maxIdempotencyKeyLength)
	}
	for i := 0; i < len(key); i++ {
		if c := key[i]; c < 0x21 || c > 0x7e {
			return "", fmt.Errorf("the key has a character outside visible ASCII (0x21-0x7E) at position %d", i+1)
		}
	}
	return key, nil
}

var errMissingKey = errors.New("the Idempotency-Key header is missing")

// unquoteSFString decodes an RFC 8941 §3.3.3 string: DQUOTE, characters
// with \" and \\ as the only escapes, DQUOTE.
func unquoteSFString(s string) (string, error) {
	if len(s) < 2 || !strings.HasSuffix(s, `"`) {
		return "", errors.New("a quoted key must end with a double quote")
	}
	var b strings.Builder
	inner := s[1 : len(s)-1]
	for i := 0; i < len(inner); i++ {
		c := inner[i]
		switch {
		case c == '\\':
			if i+1 == len(inner) || (inner[i+1] != '"' && inner[i+1] != '\\') {
				return "", errors.New(`a quoted key may escape only " and \`)
			}
			i++
			b.WriteByte(inner[i])
		case c == '"':
			return "", errors.New("a quoted key has an unescaped double quote inside")
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), nil
}

// clientScope names who sent a request, so that two callers never share a
// key space or an order (docs/http-api.md, "Keys and scope"). Every HTTP function
// derives it here. The Easy Auth principal when App Service Authentication
// runs in front (easyAuth) and so vouches for the header; else the name of
// the function key the host authenticated the caller with: a name survives
// the key's rotation, and is no secret (the key's value is never read);
// else "anonymous", for local runs where nothing is enforced. byKey tells
// that the key's name is the client.
func clientScope(r *handler.HTTPRequest, easyAuth bool) (scope string, byKey bool) {
	if id := strings.TrimSpace(r.Header.Get(headerPrincipalID)); id != "" && easyAuth {
		return "principal:" + id, false
	}
	if r.Key.Name != "" {
		return "key:" + r.Key.Name, true
	}
	return "anonymous", false
}

// sharedKeyName is the name the platform gives the function key it creates
// for every function, and the host key it creates for the app.
const sharedKeyName = "default"

// keyOfNoClient says why the key k cannot stand for one client, "" when it
// can: the platform's default keys are shared by whoever they are handed
// to, the master key (Admin) and the extensions' system keys belong to the
// platform and its operators. The clients of such keys would share one
// another's idempotency keys and orders.
func keyOfNoClient(k handler.FunctionKey) string {
	switch {
	case k.Level == "Admin":
		return "The master key is the app's administration key, not a client's."
	case k.Level == "System":
		return "A system key belongs to an extension of the platform, not to a client."
	case strings.EqualFold(k.Name, sharedKeyName):
		return `The function key named "default" is created by the platform for every function and app, so it cannot stand for one client.`
	}
	return ""
}

// shortSHA256 is the first 16 hex digits of the SHA-256 of s: enough to tell
// callers apart in logs without naming them.
func shortSHA256(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:8])
}
