package handler

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ordersink/orders-consumer/handler/handlertest"
)

// Only the host's key identity names a key: a keyid claim in another
// identity (Easy Auth's carries an identity provider's claims) does not.
func TestKeyNameComesFromTheHostsKeyIdentity(t *testing.T) {
	const partner = "partner-a"
	easyAuth := `{"AuthenticationType":"aad","IsAuthenticated":true,"Claims":[{"Type":"` + keyNameClaim + `","Value":"partner-b"}]}`
	unauthenticated := `{"AuthenticationType":"WebJobsAuthLevel","IsAuthenticated":false,"Claims":[{"Type":"` + keyNameClaim + `","Value":"partner-b"}]}`
	for _, tc := range []struct {
		name, identities, want string
	}{
		{"the host's key identity", handlertest.KeyIdentities(partner, "Function"), partner},
		{"Easy Auth's identity first, then the key's", "[" + easyAuth + "," + strings.Trim(handlertest.KeyIdentities(partner, "Function"), "[]") + "]", partner},
		{"a keyid claim in Easy Auth's identity", "[" + easyAuth + "]", ""},
		{"an unauthenticated key identity", "[" + unauthenticated + "]", ""},
		{"anonymous", handlertest.AnonymousIdentities, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var ids []wireIdentity
			if err := json.Unmarshal([]byte(tc.identities), &ids); err != nil {
				t.Fatal(err)
			}
			if got := keyOf(ids); got.Name != tc.want || (got.Name != "" && got.Level != "Function") {
				t.Errorf("key %+v, want name %q at level Function", got, tc.want)
			}
		})
	}
}
