package httpapi

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
	validatorconfig "github.com/pb33f/libopenapi-validator/config"
	verrors "github.com/pb33f/libopenapi-validator/errors"

	"github.com/ordersink/orders-consumer/handler/handlertest"
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
	v, errs := validator.NewValidator(doc, validatorconfig.WithFormatAssertions())
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

// apiExchange is one request to a function and the status it must get;
// replayed when the answer is a stored one given again.
type apiExchange struct {
	name     string
	function string
	call     httpCall
	status   int
	replayed bool
}

// TestAnswersMatchTheOpenAPIDocument produces every answer of the HTTP API
// through the real handler, from host-format envelopes, and validates each
// (status, headers, body) against docs/openapi.yaml; every answer the
// document declares must be among them, so that neither can drift from
// the other. The headers each answer promises are checked one by one
// (promisedHeaders): the validator checks a header's value, not always that
// a required one is there.
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
		promisedHeaders(t, x, a)
		path := map[string]string{FunctionSubmitOrder: "/orders", FunctionGetOrder: "/orders/{orderId}"}[x.function]
		seen[fmt.Sprintf("%s %s %d", x.call.method, path, a.StatusCode)] = true
	}
	run := func(t *testing.T, d *api, xs []apiExchange) {
		t.Helper()
		for _, x := range xs {
			t.Run(x.name, func(t *testing.T) { validate(t, x, d.call(t, x.function, x.call)) })
		}
	}

	id, body := handlertest.UniqueOrder(t)
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
	invalid := bytes.Replace(body, []byte(`"EUR"`), []byte(`"euro"`), 1)
	// In order: later answers depend on what earlier ones stored.
	run(t, startAPI(t), []apiExchange{
		{"created", FunctionSubmitOrder, submitCall(key, body), 201, false},
		{"created, replayed", FunctionSubmitOrder, submitCall(key, body), 201, true},
		{"resent under a new key", FunctionSubmitOrder, submitCall(key+"-again", body), 200, false},
		{"resent under a new key, replayed", FunctionSubmitOrder, submitCall(key+"-again", body), 200, true},
		{"the receipt of another client's order", FunctionSubmitOrder, submitCall(key+"-receipt", body).by(partnerB), 200, false},
		{"the receipt, replayed", FunctionSubmitOrder, submitCall(key+"-receipt", body).by(partnerB), 200, true},
		{"taken by another client", FunctionSubmitOrder, otherClient, 409, false},
		{"taken with other content, told to its owner", FunctionSubmitOrder, submitCall(key+"-other", other), 409, false},
		{"taken, replayed", FunctionSubmitOrder, submitCall(key+"-other", other), 409, true},
		{"a default key", FunctionSubmitOrder, submitCall(key, body).by("default"), 403, false},
		{"no Content-Length", FunctionSubmitOrder, chunked, 411, false},
		{"no Idempotency-Key", FunctionSubmitOrder, submitCall("", body), 400, false},
		{"malformed Idempotency-Key", FunctionSubmitOrder, badKey, 400, false},
		{"no body", FunctionSubmitOrder, submitCall(key+"-empty", nil), 400, false},
		{"not an order", FunctionSubmitOrder, submitCall(key+"-malformed", []byte(`{"orderId":`)), 400, false},
		{"not an order, replayed", FunctionSubmitOrder, submitCall(key+"-malformed", []byte(`{"orderId":`)), 400, true},
		{"too large", FunctionSubmitOrder, submitCall(key+"-large", tooLarge), 413, false},
		{"invalid order", FunctionSubmitOrder, submitCall(key+"-invalid", invalid), 422, false},
		{"invalid order, replayed", FunctionSubmitOrder, submitCall(key+"-invalid", invalid), 422, true},
		{"key reused", FunctionSubmitOrder, submitCall(key, other), 422, false},
		{"GET by its owner", FunctionGetOrder, getCall(id), 200, false},
		{"GET by another client", FunctionGetOrder, getCall(id).by(partnerB), 404, false},
		{"GET of an unknown orderId", FunctionGetOrder, getCall(id + "-unknown"), 404, false},
		{"GET of an orderId to escape", FunctionGetOrder, getCall("ORD 1?#%"), 404, false},
		{"GET with a default key", FunctionGetOrder, getCall(id).by("default"), 403, false},
		{"GET with a body too large", FunctionGetOrder, func() httpCall {
			c := getCall(id)
			c.body = bytes.Repeat([]byte("x"), maxHTTPInvocationBytes)
			return c
		}(), 413, false},
	})

	t.Run("in flight", func(t *testing.T) {
		var gate *gatedKeys
		d := startAPI(t, func(c *config) {
			gate = &gatedKeys{keyStore: c.Idempotency.Store.(keyStore), entered: make(chan struct{}, 1), open: make(chan struct{})}
			c.Idempotency = &idempotency.Service{Store: gate, Lease: 30 * time.Second}
		})
		id, body := handlertest.UniqueOrder(t)
		firstDone, release := d.holdFirst(t, gate, "in-flight-"+id, body)
		run(t, d, []apiExchange{{"request in progress", FunctionSubmitOrder, submitCall("in-flight-"+id, body), 409, false}})
		release()
		<-firstDone
	})

	for _, f := range []struct {
		status int
		err    error
	}{
		{503, &idempotency.KeyStoreError{Op: "claim idempotency key", Status: 503, IsTransient: true, Err: errors.New("503 throttled")}},
		{500, &idempotency.KeyStoreError{Op: "claim idempotency key", Status: 400, Err: errors.New("400 Bad Request")}},
	} {
		t.Run(fmt.Sprint("store fails ", f.status), func(t *testing.T) {
			d := startAPI(t, func(c *config) {
				c.Idempotency = &idempotency.Service{Store: failingKeys{keyStore: c.Idempotency.Store.(keyStore), err: f.err}}
				c.Orders = failingReads{err: f.err}
			})
			id, body := handlertest.UniqueOrder(t)
			run(t, d, []apiExchange{
				{"submit", FunctionSubmitOrder, submitCall("k-"+id, body), f.status, false},
				{"get", FunctionGetOrder, getCall(id), f.status, false},
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

// promisedHeaders checks the headers an answer promises, each of which a
// client acts on: every answer Cache-Control: no-store; a 201 its Location;
// a stored answer given again Idempotent-Replayed: true, and no other answer;
// a 503, a 500 and a 409 request-in-progress Retry-After, and no refusal the
// client must fix.
func promisedHeaders(t *testing.T, x apiExchange, a callerAnswer) {
	t.Helper()
	if got := a.Header.Get("Cache-Control"); got != "no-store" {
		t.Errorf("Cache-Control %q, want no-store", got)
	}
	if got := a.Header.Get("Location"); (a.StatusCode == http.StatusCreated) != (got != "") {
		t.Errorf("%d with Location %q: a 201 has one, no other answer", a.StatusCode, got)
	}
	if got := a.Header.Get(headerReplayed); x.replayed != (got == "true") || (got != "" && got != "true") {
		t.Errorf("%s %q on an answer that is replayed: %v", headerReplayed, got, x.replayed)
	}
	var p problem
	_ = json.Unmarshal(a.Body, &p)
	retry := a.StatusCode >= 500 || p.Type == ProblemTypeBase+problemInFlight.anchor
	if got := a.Header.Get("Retry-After"); retry != (got != "") {
		t.Errorf("%d %s with Retry-After %q: want one exactly on a 5xx and request-in-progress", a.StatusCode, p.Type, got)
	}
}
