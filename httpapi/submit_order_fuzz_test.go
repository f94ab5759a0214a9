package httpapi

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ordersink/orders-consumer/handler"
	"github.com/ordersink/orders-consumer/handler/handlertest"
	"github.com/ordersink/orders-consumer/idempotency"
	"github.com/ordersink/orders-consumer/idempotency/idemtest"
	"github.com/ordersink/orders-consumer/orders"
	"github.com/ordersink/orders-consumer/orders/orderstest"
)

// FuzzSubmitOrder drives SubmitOrder with any key and body over in-memory
// stores: the host is always answered 200 with a caller's answer and no
// other output; a 201 or 200 carries the stored order's view, and every
// answer of a key is replayed byte for byte; every refusal is a problem of
// its own status.
func FuzzSubmitOrder(f *testing.F) {
	f.Add("7c9e6679", []byte(orderstest.ExampleBody))
	f.Add(`"quoted\"key"`, []byte(orderstest.ExampleBody))
	f.Add("", []byte(orderstest.ExampleBody))
	f.Add("k", []byte(`{"orderId":"a","orderId":"b"}`))
	f.Add("k", []byte(strings.Replace(orderstest.ExampleBody, `"EUR"`, `"eur"`, 1)))
	f.Add("schlüssel", []byte(`[]`))
	keys, store := idemtest.NewMemStore(), orderstest.NewMemStore()
	srv := newServer(config{Config: handler.Config{Processor: &orders.Processor{Store: store}, Orders: store},
		Functions: Functions{Idempotency: &idempotency.Service{Store: keys}}}, nil)
	allowed := map[int]bool{200: true, 201: true, 400: true, 409: true, 413: true, 422: true}
	f.Fuzz(func(t *testing.T, key string, body []byte) {
		call := func() callerAnswer {
			rec := httptest.NewRecorder()
			inv := hostHTTPInvocation(FunctionSubmitOrder, submitCall(key, body))
			srv.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/"+FunctionSubmitOrder, bytes.NewReader(inv)))
			var out struct{ Outputs map[string]json.RawMessage }
			if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
				t.Fatalf("host answer %d is not JSON: %s", rec.Code, rec.Body.Bytes())
			}
			a, err := decodeCallerAnswer(handlertest.Answer{Status: rec.Code, Outputs: out.Outputs})
			if err != nil {
				t.Fatal(err)
			}
			return a
		}
		a := call()
		if !allowed[a.StatusCode] {
			t.Fatalf("status %d: %s", a.StatusCode, a.Body)
		}
		if len(a.Outputs) != 1 {
			t.Fatalf("a %d has outputs %v", a.StatusCode, a.Outputs)
		}
		if a.StatusCode/100 == 2 {
			o, err := orders.ParseOrder([]byte(asHostText(body)))
			doc, rerr := store.ReadOrder(t.Context(), o.ID)
			view, verr := orders.PublicView(doc)
			if err != nil || rerr != nil || verr != nil || !bytes.Equal(view, a.Body) {
				t.Fatalf("%d without the stored order's view: %s (%v %v %v)", a.StatusCode, a.Body, err, rerr, verr)
			}
		} else {
			var p problem
			if err := json.Unmarshal(a.Body, &p); err != nil || p.Status != a.StatusCode || !strings.HasPrefix(p.Type, ProblemTypeBase) ||
				a.Header.Get("Content-Type") != "application/problem+json" {
				t.Fatalf("%d answer is not its problem: %s", a.StatusCode, a.Body)
			}
		}
		// Refusals before the key is claimed are not stored: only an
		// answer of the key is replayed.
		if a.StatusCode/100 == 2 || (a.StatusCode == http.StatusConflict && strings.Contains(string(a.Body), "order-id-taken")) {
			if again := call(); again.StatusCode != a.StatusCode || !bytes.Equal(again.Body, a.Body) || again.Header.Get(headerReplayed) != "true" {
				t.Fatalf("retry: %d %s, first %s", again.StatusCode, again.Body, a.Body)
			}
		}
	})
}

// asHostText is body as the host hands a text request body to the function,
// through the JSON string of the invocation (hostHTTPInvocation encodes it
// so): each byte that is not part of valid UTF-8 becomes U+FFFD.
func asHostText(body []byte) string {
	j, err := json.Marshal(string(body))
	if err != nil {
		return ""
	}
	var s string
	if err := json.Unmarshal(j, &s); err != nil {
		return ""
	}
	return s
}
