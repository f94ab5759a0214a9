package hostemu

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/ordersink/orders-consumer/internal/hostjson"
)

// HTTPResponse is what the host answers an HTTP trigger's caller.
type HTTPResponse struct {
	Status int
	Header http.Header
	Body   []byte
}

// failedResponse is the host's answer when the invocation failed: 500 and
// no body, whatever the handler put in Outputs.
func failedResponse() HTTPResponse {
	return HTTPResponse{Status: http.StatusInternalServerError, Header: http.Header{}}
}

// httpResponse maps the value of an http output binding to the caller's
// response (docs/host-wire-format.md §6.2; HttpScriptInvocationResultExtensions
// .GetHttpOutputBindingResponse, HttpBinding): the value's text must read as
// an object with statusCode (a number or a numeric string; default 200),
// headers (an object; Content-Type sets the content type) and body (a string
// sent as is, another JSON value serialized). A value that does not read so
// fails the invocation. present is false when the handler left the output
// out: the host answers 200 with no body.
func httpResponse(value json.RawMessage, present bool) (HTTPResponse, error) {
	resp := HTTPResponse{Status: http.StatusOK, Header: http.Header{}}
	value = bytes.TrimSpace(value)
	if !present || len(value) == 0 || string(value) == "null" {
		return resp, nil
	}
	// The host deserializes value.ToString(): a string holding an object's
	// JSON text reads like the object itself.
	if value[0] == '"' {
		var s string
		if err := json.Unmarshal(value, &s); err != nil {
			return resp, err
		}
		value = json.RawMessage(strings.TrimSpace(s))
	}
	if len(value) == 0 || value[0] != '{' || !json.Valid(value) {
		//lint:ignore ST1005 the host's own message, word for word (GetHttpOutputBindingResponse), as a log of the real host reads
		return resp, fmt.Errorf("Failed while trying to Deserialize to httpOutputBindingResponse. Output is not in expected format: %s", truncate(string(value), 100))
	}
	members, err := objectMembers(value)
	if err != nil {
		return resp, err
	}
	// Newtonsoft matches the property names in any case; the last one
	// written wins.
	var statusCode, headers, body json.RawMessage
	for _, m := range members {
		switch strings.ToLower(m.key) {
		case "statuscode":
			statusCode = bytes.TrimSpace(m.raw)
		case "headers":
			headers = bytes.TrimSpace(m.raw)
		case "body":
			body = bytes.TrimSpace(m.raw)
		}
	}
	if resp.Status, err = statusOf(statusCode); err != nil {
		return resp, err
	}
	if err := addHeaders(resp.Header, headers); err != nil {
		return resp, err
	}
	switch {
	case len(body) == 0 || string(body) == "null":
	case body[0] == '"':
		var s string
		if err := json.Unmarshal(body, &s); err != nil {
			return resp, err
		}
		resp.Body = []byte(s)
		setDefault(resp.Header, "Content-Type", "text/plain; charset=utf-8")
	default:
		var c bytes.Buffer
		if err := json.Compact(&c, body); err != nil {
			return resp, err
		}
		resp.Body = c.Bytes()
		setDefault(resp.Header, "Content-Type", "application/json; charset=utf-8")
	}
	return resp, nil
}

// statusOf is HttpBinding.TryParseStatusCode over the string property the
// host deserialized statusCode into: an integer in any JSON form, else 200.
// A value the string property cannot hold fails; a code the server cannot
// write (outside 100-999) fails when the host writes it.
func statusOf(raw json.RawMessage) (int, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return http.StatusOK, nil
	}
	text := string(raw)
	switch raw[0] {
	case '{', '[':
		return 0, fmt.Errorf("statusCode is not a string or a number: %s", truncate(text, 100))
	case '"':
		if err := json.Unmarshal(raw, &text); err != nil {
			return 0, err
		}
	}
	n, err := strconv.Atoi(strings.TrimSpace(text))
	if err != nil {
		return http.StatusOK, nil
	}
	if n < 100 || n > 999 {
		return 0, fmt.Errorf("statusCode %d: the server cannot send it", n)
	}
	return n, nil
}

// addHeaders sets each header to its value's ToString(): strings as they
// are, numbers and booleans as .NET prints them, null as "".
func addHeaders(h http.Header, raw json.RawMessage) error {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	if raw[0] != '{' {
		return fmt.Errorf("headers is not an object: %s", truncate(string(raw), 100))
	}
	members, err := objectMembers(raw)
	if err != nil {
		return err
	}
	for _, m := range members {
		v := bytes.TrimSpace(m.raw)
		var text string
		switch {
		case string(v) == "null":
		case v[0] == '"':
			if err := json.Unmarshal(v, &text); err != nil {
				return err
			}
		case v[0] == '{' || v[0] == '[':
			b, err := hostjson.Indent(v)
			if err != nil {
				return err
			}
			text = string(b)
		case string(v) == "true":
			text = "True"
		case string(v) == "false":
			text = "False"
		default:
			text, _ = hostjson.NumberString(string(v))
		}
		if !validHeader(m.key, text) {
			return fmt.Errorf("header %q: not a valid header name or value", m.key)
		}
		h.Add(m.key, text)
	}
	return nil
}

func validHeader(name, value string) bool {
	if name == "" {
		return false
	}
	for _, c := range []byte(name) {
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`"(),/:;<=>?@[\]{}`, c) >= 0 {
			return false
		}
	}
	return !strings.ContainsAny(value, "\r\n\x00")
}

func setDefault(h http.Header, key, value string) {
	if h.Get(key) == "" {
		h.Set(key, value)
	}
}
