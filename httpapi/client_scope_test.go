package httpapi

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/ordersink/orders-consumer/handler"
	"github.com/ordersink/orders-consumer/handler/handlertest"
)

// Behind App Service Authentication every HTTP function derives the client
// from the principal (issue 24, item 4): the owner's GET works, nobody
// else's, whichever function key the callers present.
func TestEveryHTTPFunctionDerivesTheSameClientBehindEasyAuth(t *testing.T) {
	d := startAPI(t, func(c *config) { c.EasyAuth = true })
	id, body := handlertest.UniqueOrder(t)
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
			r := &handler.HTTPRequest{Header: http.Header{}, Key: handler.FunctionKey{Name: tc.keyName, Level: "Function"}}
			if tc.principal != "" {
				r.Header.Set(headerPrincipalID, tc.principal)
			}
			got, byKey := clientScope(r, tc.easyAuth)
			if got != tc.want || byKey != strings.HasPrefix(tc.want, "key:") {
				t.Errorf("scope %q (by key %v), want %q", got, byKey, tc.want)
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

// A key that cannot stand for one client is refused by both functions before
// anything is read or written (docs/runbook.md, "Onboard a partner"): the
// host gives a host key and a function key of one name the same claims, and
// names every key it creates "default", so partners handed default keys
// would share one another's orders and idempotency keys.
func TestKeysOfNoClientAreRefused(t *testing.T) {
	d := startAPI(t)
	id, body := handlertest.UniqueOrder(t)
	d.wantOrder(t, d.submit(t, "k-"+id, body), http.StatusCreated, id)
	for _, tc := range []struct {
		name, keyName, level, says string
	}{
		{"the default function or host key", "default", "Function", `"default"`},
		{"any spelling of default", "Default", "Function", `"default"`},
		{"the master key", "_master", "Admin", "master key"},
		{"a system key", "durabletask_extension", "System", "system key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for function, c := range map[string]httpCall{
				FunctionSubmitOrder: submitCall("k-"+tc.keyName+"-"+id, body).by(tc.keyName),
				FunctionGetOrder:    getCall(id).by(tc.keyName),
			} {
				c.keyLevel = tc.level
				a := d.call(t, function, c)
				p := wantProblem(t, a, http.StatusForbidden, "shared-function-key")
				if !strings.Contains(p.Detail, tc.says) || !strings.Contains(p.Detail, "function key of your own name") {
					t.Errorf("%s: detail %q; want it to name the %s and ask for a key of one's own", function, p.Detail, tc.says)
				}
				if line := d.LogsOf(a.Answer); !strings.Contains(line, `"outcome":"sharedKey"`) {
					t.Errorf("%s: log line %s, want outcome sharedKey", function, line)
				}
			}
		})
	}
	// Behind App Service Authentication the principal is the client: the
	// key is only the host's gate then.
	d = startAPI(t, func(c *config) { c.EasyAuth = true })
	c := submitCall("k-principal-"+id, body).by("default")
	c.header.Set(headerPrincipalID, "0b6f2c1e-dddd")
	if a := d.call(t, FunctionSubmitOrder, c); a.StatusCode != http.StatusOK {
		t.Errorf("a principal calling with the default key: %d %s; want the order (200, not its owner's view)", a.StatusCode, a.Body)
	}
	wantWritten(t, id)
}
