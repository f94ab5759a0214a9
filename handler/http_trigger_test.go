package handler

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/ordersink/orders-consumer/handler/handlertest"
)

// readHTTP reads the invocation whose Data.req is req (docs/host-wire-format.md
// §6.1) as an HTTP function does, with the limit given.
func readHTTP(t *testing.T, req string, limit int64) (*HTTPRequest, error) {
	t.Helper()
	inv := `{"Data":{"` + HTTPTriggerBinding + `":` + req + `},"Metadata":{}}`
	r := httptest.NewRequest(http.MethodPost, "/SubmitOrder", strings.NewReader(inv))
	return ReadHTTPRequest(httptest.NewRecorder(), r, limit)
}

// Data.req as the host writes it: an object, or a string holding one; header
// names as the caller spelled them, each an array or a single string; the
// body as text, or base64 for octet-stream and multipart; the function key
// from the key identity.
func TestReadHTTPRequestShapes(t *testing.T) {
	binary := []byte{0, 1, 0xff, '{'}
	object := func(headers, body string) string {
		req := `{"Url":"https://app.example/api/orders/ORD%201?code=k","Method":"post",` +
			`"Query":{"code":"k","n":1},"Params":{"orderId":"ORD 1"},"Headers":` + headers +
			`,"Identities":` + handlertest.KeyIdentities("partner-a", "Function")
		if body != "" {
			req += `,"Body":` + body
		}
		return req + `}`
	}
	quoted := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	for _, tc := range []struct {
		name       string
		req        string
		wantHeader http.Header
		wantBody   []byte
	}{
		{"an object, names in any case, arrays or one string",
			object(`{"content-type":["application/json"],"X-Many":["a","b"],"x-many":"c","Idempotency-Key":"k1"}`, `"{\"a\":1}"`),
			http.Header{"Content-Type": {"application/json"}, "X-Many": {"a", "b", "c"}, "Idempotency-Key": {"k1"}}, []byte(`{"a":1}`)},
		{"a string holding the object",
			quoted(object(`{"Content-Type":["application/json"]}`, `"{}"`)),
			http.Header{"Content-Type": {"application/json"}}, []byte(`{}`)},
		{"an octet-stream body in base64",
			object(`{"Content-Type":["application/octet-stream"]}`, quoted(base64.StdEncoding.EncodeToString(binary))),
			http.Header{"Content-Type": {"application/octet-stream"}}, binary},
		{"a multipart body in base64",
			object(`{"Content-Type":["multipart/form-data; boundary=x"]}`, quoted(base64.StdEncoding.EncodeToString(binary))),
			http.Header{"Content-Type": {"multipart/form-data; boundary=x"}}, binary},
		{"no body", object(`{}`, ""), http.Header{}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := readHTTP(t, tc.req, 1<<20)
			if err != nil {
				t.Fatal(err)
			}
			for _, values := range r.Header {
				sort.Strings(values) // the spellings of one name meet in map order
			}
			want := &HTTPRequest{URL: "https://app.example/api/orders/ORD%201?code=k", Method: http.MethodPost,
				Query: map[string]string{"code": "k", "n": "1"}, Params: map[string]string{"orderId": "ORD 1"},
				Header: tc.wantHeader, Key: FunctionKey{Name: "partner-a", Level: "Function"}, Body: tc.wantBody}
			if !reflect.DeepEqual(r, want) {
				t.Errorf("read %+v\nwant %+v", r, want)
			}
		})
	}
}

// A request the handler cannot read is the host's or a tool's fault, an
// envelope error; one over the limit is an *http.MaxBytesError, which the
// HTTP functions answer 413.
func TestReadHTTPRequestRefusals(t *testing.T) {
	for _, tc := range []struct{ name, req string }{
		{"not an object", `42`},
		{"no Method", `{"Url":"/api/orders"}`},
		{"a string holding no object", `"{\"Method\""`},
		{"a header neither a string nor strings", `{"Method":"GET","Headers":{"X":{"a":1}}}`},
		{"Identities the handler cannot read", `{"Method":"GET","Identities":{"x":[]}}`},
		{"an octet-stream body not in base64", `{"Method":"POST","Headers":{"Content-Type":["application/octet-stream"]},"Body":"not base64!"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if r, err := readHTTP(t, tc.req, 1<<20); !errors.Is(err, errEnvelope) {
				t.Errorf("read %+v, %v; want an envelope error", r, err)
			}
		})
	}
	t.Run("no req member", func(t *testing.T) {
		r := httptest.NewRequest(http.MethodPost, "/GetOrder", strings.NewReader(`{"Data":{"request":{"Method":"GET"}},"Metadata":{}}`))
		if got, err := ReadHTTPRequest(httptest.NewRecorder(), r, 1<<20); !errors.Is(err, errEnvelope) {
			t.Errorf("read %+v, %v; want an envelope error naming the binding", got, err)
		}
	})
	t.Run("over the limit", func(t *testing.T) {
		req := `{"Method":"POST","Body":"` + strings.Repeat("x", 1024) + `"}`
		var tooLarge *http.MaxBytesError
		if r, err := readHTTP(t, req, 1024); !errors.As(err, &tooLarge) {
			t.Errorf("read %+v, %v; want an *http.MaxBytesError", r, err)
		}
	})
}

// The host is answered 200 whatever the caller's status (any other answer
// is a 500 for the caller), as JSON, with the caller's answer as the http
// output binding and the log line in Logs.
func TestRespondHTTP(t *testing.T) {
	rec := httptest.NewRecorder()
	res := HTTPResponse{StatusCode: http.StatusNotFound, Headers: map[string]string{"Content-Type": "application/problem+json"}, Body: `{"status":404}`}
	RespondHTTP(rec, slog.New(slog.DiscardHandler), res, "GetOrder: 404 notFound ORD-1")
	if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "application/json" {
		t.Fatalf("the host is answered %d %q, want 200 application/json", rec.Code, rec.Header().Get("Content-Type"))
	}
	want := `{"Outputs":{"` + HTTPResponseBinding + `":{"statusCode":404,"headers":{"Content-Type":"application/problem+json"},"body":"{\"status\":404}"}},` +
		`"Logs":["GetOrder: 404 notFound ORD-1"],"ReturnValue":null}`
	if got := rec.Body.String(); got != want {
		t.Errorf("answer\n %s\nwant\n %s", got, want)
	}
}
