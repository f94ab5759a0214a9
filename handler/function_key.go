package handler

// The key authentication handler of the Functions host records the key a
// caller presented as an identity of its own in the request's Identities
// (docs/host-wire-format.md §6.1; azure-functions-host
// AuthenticationLevelHandler): authentication type keyAuthenticationType,
// the key's level as the claim keyLevelClaim and its name as keyNameClaim.
const (
	keyAuthenticationType = "WebJobsAuthLevel"
	keyLevelClaim         = "http://schemas.microsoft.com/2017/07/functions/claims/authlevel"
	keyNameClaim          = "http://schemas.microsoft.com/2017/07/functions/claims/keyid"
)

// FunctionKey is the key the host authenticated a request with: its name and
// level (Function for host and function keys alike, Admin for the master
// key, System for extensions' keys). The host gives a host key and a
// function key of one name the same claims, so the name alone stands for a
// client: names are unique by rule (docs/runbook.md, "Onboard a partner").
type FunctionKey struct {
	Name, Level string
}

// wireIdentity is one serialised ClaimsIdentity of Data.<trigger>.Identities
// (Newtonsoft's names; encoding/json matches them in any case).
type wireIdentity struct {
	AuthenticationType *string `json:"AuthenticationType"`
	IsAuthenticated    bool    `json:"IsAuthenticated"`
	Claims             []struct {
		Type  string `json:"Type"`
		Value string `json:"Value"`
	} `json:"Claims"`
}

// keyOf returns the function key the host authenticated the request with,
// zero when none. Only the host's key identity counts: another identity
// (Easy Auth's, whose claims come from an identity provider) cannot name a
// key.
func keyOf(ids []wireIdentity) FunctionKey {
	for _, id := range ids {
		if !id.IsAuthenticated || id.AuthenticationType == nil || *id.AuthenticationType != keyAuthenticationType {
			continue
		}
		var k FunctionKey
		for _, c := range id.Claims {
			switch c.Type {
			case keyNameClaim:
				k.Name = c.Value
			case keyLevelClaim:
				k.Level = c.Value
			}
		}
		if k.Name != "" {
			return k
		}
	}
	return FunctionKey{}
}
