package handler

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"mime"
	"net/http"
	"net/textproto"
	"strings"
)

// Binding names of the HTTP-triggered functions; they must match
// SubmitOrder/function.json and GetOrder/function.json.
const (
	HTTPTriggerBinding  = "req"
	HTTPResponseBinding = "res"
)

// HTTPRequest is the caller's request as the host hands it to an
// HTTP-triggered function (docs/host-wire-format.md §6.1): not the request
// the host POSTs to the handler, but the one it received.
type HTTPRequest struct {
	URL    string
	Method string
	Query  map[string]string
	// Header holds the caller's headers under canonical names: the host
	// keeps names as the caller spelled them (lower case over HTTP/2).
	Header http.Header
	Params map[string]string
	// Key is the function key the host authenticated the caller with
	// ([keyOf]); zero when none.
	Key FunctionKey
	// Body is the request body; nil when the caller sent none (the host
	// leaves Body out when Content-Length is 0 or absent).
	Body []byte
}

// wireHTTPRequest is Data.<trigger> as the host writes it; encoding/json
// matches the host's PascalCase names without regard to case.
type wireHTTPRequest struct {
	URL     string                     `json:"Url"`
	Method  string                     `json:"Method"`
	Query   map[string]json.RawMessage `json:"Query"`
	Headers map[string]json.RawMessage `json:"Headers"`
	Params  map[string]json.RawMessage `json:"Params"`
	// Identities decides who the caller is: one that the handler cannot
	// read fails the invocation rather than make the caller anonymous.
	Identities []wireIdentity `json:"Identities"`
	Body       *string        `json:"Body"`
}

// ReadHTTPRequest reads the invocation of an HTTP-triggered function, at
// most limit bytes, and decodes the caller's request from Data.req
// (HTTPTriggerBinding). A request over the limit is an *http.MaxBytesError;
// any other error is the host's or a tool's, never the caller's: a renamed
// binding, a shape the handler cannot read.
func ReadHTTPRequest(w http.ResponseWriter, r *http.Request, limit int64) (*HTTPRequest, error) {
	inv, err := readInvocation(w, r, limit)
	if err != nil {
		return nil, err
	}
	return inv.httpTrigger(HTTPTriggerBinding)
}

// httpTrigger decodes the HTTP request of an invocation. The host writes
// Data.req as a JSON object; a string holding that object (how it encodes
// every other trigger value) is accepted too.
func (inv *invocation) httpTrigger(binding string) (*HTTPRequest, error) {
	raw, ok := inv.Data[binding]
	if !ok {
		return nil, fmt.Errorf("%w: Data has no %q member (the httpTrigger binding name in function.json)", errEnvelope, binding)
	}
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, fmt.Errorf("%w: Data.%s is not a JSON string: %v", errEnvelope, binding, err)
		}
		raw = []byte(s)
	}
	var w wireHTTPRequest
	if err := json.Unmarshal(raw, &w); err != nil || w.Method == "" {
		return nil, fmt.Errorf("%w: Data.%s is not an HTTP request object with a Method (%v)", errEnvelope, binding, err)
	}
	r := &HTTPRequest{URL: w.URL, Method: strings.ToUpper(w.Method), Header: http.Header{},
		Query: scalars(w.Query), Params: scalars(w.Params), Key: keyOf(w.Identities)}
	for name, v := range w.Headers {
		values, err := headerValues(v)
		if err != nil {
			return nil, fmt.Errorf("%w: header %q: %v", errEnvelope, name, err)
		}
		key := textproto.CanonicalMIMEHeaderKey(name)
		r.Header[key] = append(r.Header[key], values...)
	}
	if w.Body != nil {
		r.Body = []byte(*w.Body)
		// The host sends the bytes of an octet-stream (and multipart) body
		// as base64, everything else as text.
		if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt == "application/octet-stream" || strings.HasPrefix(mt, "multipart/") {
			b, err := base64.StdEncoding.DecodeString(*w.Body)
			if err != nil {
				return nil, fmt.Errorf("%w: the %s body is not base64: %v", errEnvelope, mt, err)
			}
			r.Body = b
		}
	}
	return r, nil
}

// headerValues reads one header: an array of strings as the host sends it,
// or a single string (the form Metadata.Headers uses).
func headerValues(raw json.RawMessage) ([]string, error) {
	var many []string
	if err := json.Unmarshal(raw, &many); err == nil {
		return many, nil
	}
	var one string
	if err := json.Unmarshal(raw, &one); err != nil {
		return nil, errors.New("neither a string nor an array of strings")
	}
	return []string{one}, nil
}

// scalars reads the host's name -> string objects (Query, Params), keeping
// the text of a value that is not a string.
func scalars(m map[string]json.RawMessage) map[string]string {
	out := make(map[string]string, len(m))
	for k, raw := range m {
		if s, ok := metaString(raw); ok {
			out[k] = s
		}
	}
	return out
}

// HTTPResponse is the value of the http output binding (docs/host-wire-format.md
// §6.2): the host answers the caller with it. Body is sent as is, so the
// bytes the caller gets are the bytes built here.
type HTTPResponse struct {
	StatusCode int               `json:"statusCode"`
	Headers    map[string]string `json:"headers,omitempty"`
	Body       string            `json:"body"`
}

// RespondHTTP answers the host of an HTTP-triggered invocation: res for the
// caller, and logLine for the host's Logs. The host itself is always
// answered 200: it turns any other answer into a 500 for the caller, so what
// the caller gets is res alone.
func RespondHTTP(w http.ResponseWriter, log *slog.Logger, res HTTPResponse, logLine string) {
	out := newResult()
	out.Outputs[HTTPResponseBinding] = res
	out.Logs = append(out.Logs, logLine)
	encode(w, log, http.StatusOK, out)
}
