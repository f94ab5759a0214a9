package handlertest

import "encoding/json"

// AnonymousIdentities is Data.req.Identities of a caller the host
// authenticated with nothing: one unauthenticated ClaimsIdentity, as
// Newtonsoft serialises it (azure-functions-host HttpRequestExtensions
// .GetUserIdentitiesAsJArray).
const AnonymousIdentities = `[{"AuthenticationType":null,"IsAuthenticated":false,"Actor":null,"BootstrapContext":null,"Claims":[],` +
	`"Label":null,"Name":null,"NameClaimType":"http://schemas.xmlsoap.org/ws/2005/05/identity/claims/name",` +
	`"RoleClaimType":"http://schemas.microsoft.com/ws/2008/06/identity/claims/role"}]`

// KeyIdentities is Data.req.Identities of a caller the host authenticated
// with the key named name at level (Function, Admin, System): the identity
// AuthenticationLevelHandler builds (scheme WebJobsAuthLevel; claims
// authlevel, invoke, keyid), each claim as Newtonsoft serialises a Claim (its
// Subject dropped as a loop).
func KeyIdentities(name, level string) string {
	claim := func(typ, value string) string {
		v, _ := json.Marshal(value)
		return `{"Issuer":"LOCAL AUTHORITY","OriginalIssuer":"LOCAL AUTHORITY","Properties":{},` +
			`"Type":"http://schemas.microsoft.com/2017/07/functions/claims/` + typ + `","Value":` + string(v) +
			`,"ValueType":"http://www.w3.org/2001/XMLSchema#string"}`
	}
	return `[{"AuthenticationType":"WebJobsAuthLevel","IsAuthenticated":true,"Actor":null,"BootstrapContext":null,"Claims":[` +
		claim("authlevel", level) + "," + claim("invoke", "true") + "," + claim("keyid", name) +
		`],"Label":null,"Name":null,"NameClaimType":"http://schemas.xmlsoap.org/ws/2005/05/identity/claims/name",` +
		`"RoleClaimType":"http://schemas.microsoft.com/ws/2008/06/identity/claims/role"}]`
}
