package handler

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// Behind App Service Authentication every HTTP function derives the client
// from the principal (issue 24, item 4): the owner's GET works, nobody
// else's, whichever function key the callers present.
func TestEveryHTTPFunctionDerivesTheSameClientBehindEasyAuth(t *testing.T) {
	d := startAPI(t, func(c *Config) { c.EasyAuth = true })
	id, body := uniqueOrder(t)
	as := func(c httpCall, principal string) httpCall {
		c.header = c.header.Clone()
		if principal != "" {
			c.header.Set(headerPrincipalID, principal)
		}
		return c
	}
	created := d.call(t, FunctionSubmitOrder, as(submitCall("k-"+id, body), "0b6f2c1e-aaaa"))
	d.wantOrder(t, created, http.StatusCreated, id)
	var stored struct{ Owner string }
	if err := json.Unmarshal(d.storedOrder(t, id), &stored); err != nil || stored.Owner != "principal:0b6f2c1e-aaaa" {
		t.Fatalf("owner %q, %v", stored.Owner, err)
	}
	// The owner, with another function key: the principal decides.
	d.wantOrder(t, d.get(t, as(getCall(id).by(partnerB), "0b6f2c1e-aaaa")), http.StatusOK, id)
	// Another principal with the same key, or the key without a principal.
	wantProblem(t, d.get(t, as(getCall(id), "9c3d-bbbb")), http.StatusNotFound, "order-not-found")
	wantProblem(t, d.get(t, getCall(id)), http.StatusNotFound, "order-not-found")
}

func TestClientScope(t *testing.T) {
	for _, tc := range []struct {
		name     string
		easyAuth bool
		principal,
		keyName string
		want string
	}{
		{"Easy Auth principal wins", true, "0b6f2c1e", partnerA, "principal:0b6f2c1e"},
		// Without Easy Auth in front nothing strips the header: a caller
		// could take another's scope with it.
		{"a principal header without Easy Auth", false, "0b6f2c1e", partnerA, "key:" + partnerA},
		{"the function key's name", false, "", partnerA, "key:" + partnerA},
		{"nothing: a local run", false, "", "", "anonymous"},
		{"Easy Auth without a principal", true, "", "", "anonymous"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &httpRequest{Header: http.Header{}, KeyName: tc.keyName}
			if tc.principal != "" {
				r.Header.Set(headerPrincipalID, tc.principal)
			}
			if got := clientScope(r, tc.easyAuth); got != tc.want {
				t.Errorf("scope %q, want %q", got, tc.want)
			}
		})
	}
}

// Only the host's key identity names a key: a keyid claim in another
// identity (Easy Auth's carries an identity provider's claims) does not.
func TestKeyNameComesFromTheHostsKeyIdentity(t *testing.T) {
	easyAuth := `{"AuthenticationType":"aad","IsAuthenticated":true,"Claims":[{"Type":"` + keyNameClaim + `","Value":"partner-b"}]}`
	unauthenticated := `{"AuthenticationType":"WebJobsAuthLevel","IsAuthenticated":false,"Claims":[{"Type":"` + keyNameClaim + `","Value":"partner-b"}]}`
	for _, tc := range []struct {
		name, identities, want string
	}{
		{"the host's key identity", keyIdentities(partnerA), partnerA},
		{"Easy Auth's identity first, then the key's", "[" + easyAuth + "," + strings.Trim(keyIdentities(partnerA), "[]") + "]", partnerA},
		{"a keyid claim in Easy Auth's identity", "[" + easyAuth + "]", ""},
		{"an unauthenticated key identity", "[" + unauthenticated + "]", ""},
		{"anonymous", anonymousIdentities, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var ids []wireIdentity
			if err := json.Unmarshal([]byte(tc.identities), &ids); err != nil {
				t.Fatal(err)
			}
			if got := keyName(ids); got != tc.want {
				t.Errorf("key name %q, want %q", got, tc.want)
			}
		})
	}
}

// TestIdempotencyKeyCharactersAndEscapes: a key is visible ASCII from '!'
// (0x21) to '~' (0x7E), both ends included; a quoted key (RFC 8941 §3.3.3)
// may escape only `"` and `\`, and a backslash cannot end it.
func TestIdempotencyKeyCharactersAndEscapes(t *testing.T) {
	for _, tc := range []struct {
		sent, want string // want "" means refused
		says       string // in the refusal, when set
	}{
		{"!abc~", "!abc~", ""},
		{"a b", "", "at position 2"},
		{"ab\x7f", "", "at position 3"},
		{`"a\"b"`, `a"b`, ""},
		{`"a\\b"`, `a\b`, ""},
		{`"\\"`, `\`, ""},
		{`"ab\"`, "", ""},
		{`"a\nb"`, "", ""},
		{`"a"b"`, "", ""},
	} {
		h := http.Header{}
		h.Set(headerIdempotencyKey, tc.sent)
		got, err := idempotencyKey(h)
		switch {
		case tc.want == "" && err == nil:
			t.Errorf("key %q: accepted as %q, want refused", tc.sent, got)
		case tc.want != "" && (err != nil || got != tc.want):
			t.Errorf("key %q: %q, %v; want %q", tc.sent, got, err, tc.want)
		case tc.says != "" && (err == nil || !strings.Contains(err.Error(), tc.says)):
			t.Errorf("key %q: refusal %v does not say %q", tc.sent, err, tc.says)
		}
	}
}
