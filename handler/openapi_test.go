package handler

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	"github.com/pb33f/libopenapi-validator/config"
	verrors "github.com/pb33f/libopenapi-validator/errors"

	"github.com/ordersink/orders-consumer/idempotency"
)

// openAPIDocument is the API's OpenAPI document (clients and gateways are
// generated from it).
var openAPIDocument = filepath.Join("..", "docs", "openapi.yaml")

// openAPI loads the document, which must be a valid OpenAPI 3.1 document,
// and a validator of answers against it (formats such as date-time
// asserted).
func openAPI(t *testing.T) (libopenapi.Document, validator.Validator) {
	t.Helper()
	spec, err := os.ReadFile(openAPIDocument)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := libopenapi.NewDocument(spec)
	if err != nil {
		t.Fatalf("%s: %v", openAPIDocument, err)
	}
	v, errs := validator.NewValidator(doc, config.WithFormatAssertions())
	if len(errs) > 0 {
		t.Fatalf("%s: %v", openAPIDocument, errors.Join(errs...))
	}
	if ok, verrs := v.ValidateDocument(); !ok {
		t.Fatalf("%s is not a valid OpenAPI document: %s", openAPIDocument, describeValidation(verrs))
	}
	return doc, v
}

// documented lists "METHOD /path status" for every answer the document
// declares.
func documented(t *testing.T, doc libopenapi.Document) []string {
	t.Helper()
	model, err := doc.BuildV3Model()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for path, item := range model.Model.Paths.PathItems.FromOldest() {
		for method, op := range item.GetOperations().FromOldest() {
			for code := range op.Responses.Codes.KeysFromOldest() {
				out = append(out, strings.ToUpper(method)+" "+path+" "+code)
			}
		}
	}
	slices.Sort(out)
	return out
}

// describeValidation is the validator's findings, one per line.
func describeValidation(errs []*verrors.ValidationError) string {
	var b strings.Builder
	for _, e := range errs {
		fmt.Fprintf(&b, "\n  %s: %s", e.Message, e.Reason)
		for _, s := range e.SchemaValidationErrors {
			fmt.Fprintf(&b, "\n    %s (at %s)", s.Reason, s.KeywordLocation)
		}
	}
	return b.String()
}

// failingReads is an order reader whose reads fail with err.
type failingReads struct{ err error }

func (f failingReads) ReadOrder(context.Context, string) (json.RawMessage, error) { return nil, f.err }

// apiExchange is one request to a function and the status it must get.
type apiExchange struct {
	name     string
	function string
	call     httpCall
	status   int
}

// TestAnswersMatchTheOpenAPIDocument produces every answer of the HTTP API
// through the real handler, from host-format envelopes, and validates each
// (status, headers, body) against docs/openapi.yaml; every answer the
// document declares must be among them, so that neither can drift from
// the other.
func TestAnswersMatchTheOpenAPIDocument(t *testing.T) {
	doc, v := openAPI(t)
	seen := map[string]bool{}
	validate := func(t *testing.T, x apiExchange, a callerAnswer) {
		t.Helper()
		if a.StatusCode != x.status {
			t.Fatalf("status %d, want %d: %s", a.StatusCode, x.status, a.Body)
		}
		req, err := http.NewRequest(x.call.method, "https://orders-app.azurewebsites.net"+x.call.target, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp := &http.Response{StatusCode: a.StatusCode, Header: a.Header, Body: io.NopCloser(bytes.NewReader(a.Body)), Request: req}
		if ok, errs := v.ValidateHttpResponse(req, resp); !ok {
			t.Errorf("%s answer %d does not match %s:%s\nheaders %s; body %s", x.function, a.StatusCode, openAPIDocument,
				describeValidation(errs), a.headerNames(), a.Body)
		}
		path := map[string]string{FunctionSubmitOrder: "/orders", FunctionGetOrder: "/orders/{orderId}"}[x.function]
		seen[fmt.Sprintf("%s %s %d", x.call.method, path, a.StatusCode)] = true
	}
	run := func(t *testing.T, d *api, xs []apiExchange) {
		t.Helper()
		for _, x := range xs {
			t.Run(x.name, func(t *testing.T) { validate(t, x, d.call(t, x.function, x.call)) })
		}
	}

	id, body := uniqueOrder(t)
	other := bytes.Replace(body, []byte(`"total":"44.98"`), []byte(`"total":"44.98","note":"changed"`), 1)
	key := "openapi-" + id
	chunked := submitCall(key+"-chunked", body)
	chunked.chunked = true
	badKey := submitCall("", body)
	badKey.header.Set(headerIdempotencyKey, "my key")
	otherClient := submitCall("", other).by(partnerB)
	otherClient.header.Set(headerIdempotencyKey, key+"-b")
	tooLarge := append([]byte(`{"pad":"`), bytes.Repeat([]byte("x"), MaxSubmitBytes)...)
	tooLarge = append(tooLarge, `"}`...)
	// In order: later answers depend on what earlier ones stored.
	run(t, startAPI(t), []apiExchange{
		{"created", FunctionSubmitOrder, submitCall(key, body), 201},
		{"created, replayed", FunctionSubmitOrder, submitCall(key, body), 201},
		{"resent under a new key", FunctionSubmitOrder, submitCall(key+"-again", body), 200},
		{"resent under a new key, replayed", FunctionSubmitOrder, submitCall(key+"-again", body), 200},
		{"taken by another client", FunctionSubmitOrder, otherClient, 409},
		{"taken with other content, told to its owner", FunctionSubmitOrder, submitCall(key+"-other", other), 409},
		{"taken, replayed", FunctionSubmitOrder, submitCall(key+"-other", other), 409},
		{"no Content-Length", FunctionSubmitOrder, chunked, 411},
		{"no Idempotency-Key", FunctionSubmitOrder, submitCall("", body), 400},
		{"malformed Idempotency-Key", FunctionSubmitOrder, badKey, 400},
		{"no body", FunctionSubmitOrder, submitCall(key+"-empty", nil), 400},
		{"not an order", FunctionSubmitOrder, submitCall(key+"-malformed", []byte(`{"orderId":`)), 400},
		{"too large", FunctionSubmitOrder, submitCall(key+"-large", tooLarge), 413},
		{"invalid order", FunctionSubmitOrder, submitCall(key+"-invalid", bytes.Replace(body, []byte(`"EUR"`), []byte(`"euro"`), 1)), 422},
		{"key reused", FunctionSubmitOrder, submitCall(key, other), 422},
		{"GET by its owner", FunctionGetOrder, getCall(id), 200},
		{"GET by another client", FunctionGetOrder, getCall(id).by(partnerB), 404},
		{"GET of an unknown orderId", FunctionGetOrder, getCall(id + "-unknown"), 404},
	})

	t.Run("in flight", func(t *testing.T) {
		var gate *gatedKeys
		d := startAPI(t, func(c *Config) {
			gate = &gatedKeys{keyStore: c.Idempotency.Store.(keyStore), entered: make(chan struct{}, 1), open: make(chan struct{})}
			c.Idempotency = &idempotency.Service{Store: gate, Lease: 30 * time.Second}
		})
		id, body := uniqueOrder(t)
		firstDone, release := d.holdFirst(t, gate, "in-flight-"+id, body)
		run(t, d, []apiExchange{{"request in progress", FunctionSubmitOrder, submitCall("in-flight-"+id, body), 409}})
		release()
		<-firstDone
	})

	for _, f := range []struct {
		status int
		err    error
	}{
		{503, &idempotency.StoreError{Op: "claim idempotency key", Status: 503, IsTransient: true, Err: errors.New("503 throttled")}},
		{500, &idempotency.StoreError{Op: "claim idempotency key", Status: 400, Err: errors.New("400 Bad Request")}},
	} {
		t.Run(fmt.Sprint("store fails ", f.status), func(t *testing.T) {
			d := startAPI(t, func(c *Config) {
				c.Idempotency = &idempotency.Service{Store: failingKeys{keyStore: c.Idempotency.Store.(keyStore), err: f.err}}
				c.Orders = failingReads{err: f.err}
			})
			id, body := uniqueOrder(t)
			run(t, d, []apiExchange{
				{"submit", FunctionSubmitOrder, submitCall("k-"+id, body), f.status},
				{"get", FunctionGetOrder, getCall(id), f.status},
			})
		})
	}

	if t.Failed() {
		return
	}
	for _, answer := range documented(t, doc) {
		if !seen[answer] {
			t.Errorf("%s declares %s, which no request here produced", openAPIDocument, answer)
		}
	}
}
