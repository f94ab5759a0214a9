package hostemu

import (
	"bytes"
	"encoding/base64"
	"mime"
	"net/http"
	"net/url"
	"sort"
	"strings"
)

// HTTPRequest is a caller's request as the host hands it to an HTTP-triggered
// function.
type HTTPRequest struct {
	Method string
	// URL is scheme://host/path?query as the host saw the request.
	URL string
	// RawQuery is the query string without "?".
	RawQuery string
	Header   http.Header
	// Host is the Host header (Go keeps it out of Header).
	Host string
	// Body is read only when Content-Length is positive (HasBody): the host
	// gives a chunked request no body at all.
	Body    []byte
	HasBody bool
	Params  []RouteParam
	// RouteHasParams: the route template has parameters, so the request
	// carries Params even when an optional one was left out.
	RouteHasParams bool
	// KeyName is the name of the function key the caller presented, once
	// checked against the app's keys; empty when none was.
	KeyName string
}

// LogURL is URL with the value of the code query parameter (a function
// key, in any case of its name) hidden, as the Functions host's log
// sanitizer hides credentials: the URL to print, where URL is the one the
// handler gets.
func (r HTTPRequest) LogURL() string {
	base, query, ok := strings.Cut(r.URL, "?")
	if !ok {
		return r.URL
	}
	params := strings.Split(query, "&")
	for i, p := range params {
		name, _, _ := strings.Cut(p, "=")
		if n, err := url.QueryUnescape(name); err == nil && strings.EqualFold(n, "code") {
			params[i] = name + "=[Hidden Credential]"
		}
	}
	return base + "?" + strings.Join(params, "&")
}

// anonymousIdentity is the one identity the host serializes for a caller that
// presented no platform identity (an unauthenticated ClaimsIdentity); the
// shape is the reference's (docs/host-wire-format.md §6.1) and a handler must
// not rely on it.
const anonymousIdentity = `[{"AuthenticationType":null,"IsAuthenticated":false,"Actor":null,"BootstrapContext":null,"Claims":[],"Label":null,"Name":null,"NameClaimType":"http://schemas.xmlsoap.org/ws/2005/05/identity/claims/name","RoleClaimType":"http://schemas.microsoft.com/ws/2008/06/identity/claims/role"}]`

// Claim types of the identity the host's AuthenticationLevelHandler builds
// for a caller with a valid key (SecurityConstants.cs in
// azure-functions-host).
const (
	claimAuthLevel = "http://schemas.microsoft.com/2017/07/functions/claims/authlevel"
	claimInvoke    = "http://schemas.microsoft.com/2017/07/functions/claims/invoke"
	claimKeyID     = "http://schemas.microsoft.com/2017/07/functions/claims/keyid"
)

// identities is Data.<trigger>.Identities: for a caller that presented a
// function key, the one authenticated identity of the "WebJobsAuthLevel"
// scheme with the claims authlevel (Function), invoke and keyid (the key's
// name, never its value), in that order; Newtonsoft writes each
// ClaimsIdentity and Claim property in declaration order and drops
// Claim.Subject, which loops back to the identity. Otherwise the anonymous
// identity.
func identities(keyName string) []byte {
	if keyName == "" {
		return []byte(anonymousIdentity)
	}
	claim := func(typ, value string) []byte {
		c := newObject()
		c.set("Issuer", quote("LOCAL AUTHORITY"))
		c.set("OriginalIssuer", quote("LOCAL AUTHORITY"))
		c.set("Properties", []byte("{}"))
		c.set("Type", quote(typ))
		c.set("Value", quote(value))
		c.set("ValueType", quote("http://www.w3.org/2001/XMLSchema#string"))
		return c.bytes()
	}
	id := newObject()
	id.set("AuthenticationType", quote("WebJobsAuthLevel"))
	id.set("IsAuthenticated", []byte("true"))
	id.set("Actor", []byte("null"))
	id.set("BootstrapContext", []byte("null"))
	id.set("Claims", jsonArray([][]byte{claim(claimAuthLevel, "Function"), claim(claimInvoke, "true"), claim(claimKeyID, keyName)}))
	id.set("Label", []byte("null"))
	id.set("Name", []byte("null"))
	id.set("NameClaimType", quote("http://schemas.xmlsoap.org/ws/2005/05/identity/claims/name"))
	id.set("RoleClaimType", quote("http://schemas.microsoft.com/ws/2008/06/identity/claims/role"))
	return jsonArray([][]byte{id.bytes()})
}

// HTTP encodes the invocation of an HTTP-triggered function with
// enableForwardingHttpRequest false (docs/host-wire-format.md §6.1):
// Data.<trigger> is the request as an object (HttpRequestExtensions
// .GetRequestAsJObject), Metadata the HTTP extension's binding data (body
// members, query parameters but code, route parameters, Query, Headers),
// then sys.
func (e *Encoder) HTTP(fn *Function, r HTTPRequest) []byte {
	query := parseQuery(r.RawQuery)
	headers := requestHeaders(r)

	req := newObject()
	req.set("Url", quote(r.URL))
	req.set("Method", quote(r.Method))
	q := newObject()
	for _, p := range query {
		q.set(p.name, quote(strings.Join(p.values, ",")))
	}
	req.set("Query", q.bytes())
	h := newObject()
	for _, p := range headers {
		vals := make([][]byte, len(p.values))
		for i, v := range p.values {
			vals[i] = quote(v)
		}
		h.set(p.name, jsonArray(vals))
	}
	req.set("Headers", h.bytes())
	if r.RouteHasParams {
		params := newObject()
		for _, p := range r.Params {
			params.set(p.Name, quote(p.Value))
		}
		req.set("Params", params.bytes())
	}
	req.set("Identities", identities(r.KeyName))
	body := ""
	if r.HasBody {
		body = bodyText(r.Body)
		if octetOrMultipart(r.Header.Get("Content-Type")) {
			req.set("Body", quote(base64.StdEncoding.EncodeToString(r.Body)))
		} else {
			req.set("Body", quote(body))
		}
	}
	data := newObject()
	data.set(fn.Trigger().Name, req.bytes())

	// The extension's binding data is a dictionary ignoring case: a later
	// key of the same name replaces the value and keeps the first spelling.
	md := newObject()
	if r.HasBody {
		addBodyMembers(md, []byte(body))
	}
	for _, p := range query {
		if !strings.EqualFold(p.name, "code") {
			md.setFold(p.name, quote(quoteString(strings.Join(p.values, ","))))
		}
	}
	for _, p := range r.Params {
		md.setFold(p.Name, quote(quoteString(p.Value)))
	}
	last := newObject()
	for _, p := range query {
		last.set(p.name, quote(p.values[len(p.values)-1]))
	}
	md.addFold("Query", last.bytes())
	joined := newObject()
	for _, p := range headers {
		joined.set(p.name, quote(strings.Join(p.values, ",")))
	}
	md.addFold("Headers", joined.bytes())
	// The host leaves out binding data whose name ends in "trigger": that
	// would repeat the trigger value.
	md.deleteFunc(func(k string) bool { return strings.HasSuffix(strings.ToLower(k), "trigger") })
	md.set("sys", e.sys(fn.Name))
	return envelope(data, md)
}

type namedValues struct {
	name   string
	values []string
}

// parseQuery reads a query string as ASP.NET Core does: names in order of
// first appearance, compared in any case (the first spelling kept), every
// value of a repeated name kept in order.
func parseQuery(raw string) []namedValues {
	var out []namedValues
	for _, part := range strings.Split(raw, "&") {
		if part == "" {
			continue
		}
		k, v, _ := strings.Cut(part, "=")
		k, v = unescapeQuery(k), unescapeQuery(v)
		found := false
		for i := range out {
			if strings.EqualFold(out[i].name, k) {
				out[i].values, found = append(out[i].values, v), true
				break
			}
		}
		if !found {
			out = append(out, namedValues{name: k, values: []string{v}})
		}
	}
	return out
}

func unescapeQuery(s string) string {
	if u, err := url.QueryUnescape(s); err == nil {
		return u
	}
	return s
}

// requestHeaders are the request's headers with Host and Transfer-Encoding
// put back (Go's server moves them out of Header), sorted by name: Go does
// not keep the order the caller sent them in (Kestrel enumerates its known
// headers in a fixed order of its own, then the others as received).
func requestHeaders(r HTTPRequest) []namedValues {
	out := make([]namedValues, 0, len(r.Header)+1)
	if r.Host != "" {
		out = append(out, namedValues{name: "Host", values: []string{r.Host}})
	}
	for k, vs := range r.Header {
		if strings.EqualFold(k, "Host") {
			continue
		}
		out = append(out, namedValues{name: k, values: vs})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// bodyText is ReadAsStringAsync: UTF-8 with a byte order mark dropped,
// bytes that are not UTF-8 replaced.
func bodyText(b []byte) string {
	return lenientUTF8(bytes.TrimPrefix(b, []byte("\xef\xbb\xbf")))
}

// octetOrMultipart is Utility.IsMediaTypeOctetOrMultipart: such bodies are
// given as bytes (base64 on the wire), every other one as text.
func octetOrMultipart(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return false
	}
	return mt == "application/octet-stream" || strings.HasPrefix(mt, "multipart/")
}
