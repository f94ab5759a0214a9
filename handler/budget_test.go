package handler

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ordersink/orders-consumer/handler/handlertest"
	"github.com/ordersink/orders-consumer/internal/hostjson"
	"github.com/ordersink/orders-consumer/orders"
	"github.com/ordersink/orders-consumer/orders/orderstest"
)

// FuzzOutputBudget: whatever the body, no output the handler produces, and
// no event an order it accepts will publish, is over the budget as the host
// sends it. The limit is small (8 KB) so that small inputs reach it.
func FuzzOutputBudget(f *testing.F) {
	const maxMessage = 8 << 10
	budget := maxMessage - HeaderAllowance
	for _, seed := range [][]byte{
		[]byte(orderstest.ExampleBody),
		escapingBody("ORD-F", 2000),
		invalidBody("ORD-F", budget),
		handlertest.OrderWithArray("ORD-F", 400),
		handlertest.OrderWithArray("ORD-F", 1000),
		[]byte(strings.Replace(orderstest.ExampleBody, `"SKU-1"`, `"`+strings.Repeat("<", 3000)+`"`, 1)),
	} {
		f.Add(seed)
	}
	cfg := Config{Processor: &orders.Processor{Store: orderstest.NewMemStore(), Now: handlertest.FixedNow}, MaxMessageBytes: maxMessage, Now: handlertest.FixedNow}
	srv := NewServer(cfg)
	f.Fuzz(func(t *testing.T, body []byte) {
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/"+FunctionProcessOrder, bytes.NewReader(hostInvocation(body, "M-1", 1))))
		var out struct{ Outputs map[string]json.RawMessage }
		if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &out) != nil {
			t.Fatalf("status %d: %.300s", rec.Code, rec.Body.Bytes())
		}
		if raw, ok := out.Outputs[ParkingBinding]; ok {
			if n, err := hostjson.Size(raw); err != nil || n > budget {
				t.Fatalf("envelope is %d bytes as the host sends it, over the budget %d (%v)", n, budget, err)
			}
			return
		}
		o, err := orders.ParseOrder(body)
		if err != nil {
			return // a status change, applied or stale: it publishes nothing
		}
		e, err := o.AcceptedEvent(orders.Acceptance{MessageID: "M-1", AcceptedAt: handlertest.FixedNow()})
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := json.Marshal(e)
		if n, err := hostjson.Size(raw); err != nil || n > budget {
			t.Fatalf("accepted an order whose event is %d bytes as the host sends it, over the budget %d (%v)", n, budget, err)
		}
	})
}

// BenchmarkOutputBudget is what the budget costs per accepted order: the
// event encoded and measured as the host would send it.
func BenchmarkOutputBudget(b *testing.B) {
	o, err := orders.ParseOrder([]byte(orderstest.ExampleBody))
	if err != nil {
		b.Fatal(err)
	}
	e, err := o.AcceptedEvent(orders.Acceptance{MessageID: "M-1", AcceptedAt: handlertest.FixedNow()})
	if err != nil {
		b.Fatal(err)
	}
	fits := OutputBudget(0)
	b.ReportAllocs()
	for b.Loop() {
		if err := fits(e); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkOutputBudgetLargeEnvelope is the slow path: an envelope near the
// limit, which the one-pass bound cannot decide, re-serialised in full.
func BenchmarkOutputBudgetLargeEnvelope(b *testing.B) {
	d := delivery{function: FunctionProcessOrder, messageID: "ORD-B", body: escapingBody("ORD-B", 60<<10)}
	e := d.envelope(orders.Result{Outcome: orders.Invalid, Reason: orders.ValidationFailed, OrderID: "ORD-B"}, handlertest.FixedNow())
	fits := OutputBudget(0)
	b.ReportAllocs()
	for b.Loop() {
		if err := fits(e); err != nil {
			b.Fatal(err)
		}
	}
}
