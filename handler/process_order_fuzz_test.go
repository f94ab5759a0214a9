package handler

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/ordersink/orders-consumer/orders"
	"github.com/ordersink/orders-consumer/orders/orderstest"
)

// FuzzProcessOrder drives the whole HTTP handler over an in-memory store:
// every request gets an answer the host accepts (2xx JSON object) or a
// retry (non-2xx); a 2xx either completes cleanly or parks with a reason.
func FuzzProcessOrder(f *testing.F) {
	addRequestSeeds(f)
	srv := NewServer(Config{Processor: &orders.Processor{Store: orderstest.NewMemStore()}, MaxRequestBytes: 1 << 20})
	reasons := map[orders.Reason]bool{orders.HashMismatch: true, orders.ValidationFailed: true, orders.MalformedMessage: true, orders.RetryBudgetExhausted: true}
	f.Fuzz(func(t *testing.T, request []byte) {
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/"+FunctionProcessOrder, bytes.NewReader(request)))
		if rec.Code != http.StatusOK {
			// Only an undecodable invocation is retried: the in-memory store
			// cannot fail.
			inv, err := decodeInvocation(request)
			if err == nil {
				_, _, err = inv.triggerText(TriggerBinding)
			}
			if err == nil || rec.Code != http.StatusServiceUnavailable {
				t.Fatalf("status %d for a decodable invocation (%v)", rec.Code, err)
			}
			return
		}
		if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
			t.Fatalf("Content-Type %q", ct)
		}
		var out struct {
			Outputs map[string]json.RawMessage
			Logs    []string
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil || out.Outputs == nil || len(out.Logs) != 1 {
			t.Fatalf("answer %s (%v)", rec.Body.Bytes(), err)
		}
		if raw, ok := out.Outputs[ParkingBinding]; ok {
			var e ParkingEnvelope
			if err := json.Unmarshal(raw, &e); err != nil || !reasons[e.Reason] || e.Description == "" {
				t.Fatalf("parking envelope %s", raw)
			}
		}
	})
}
