package verify

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/ordersink/orders-consumer/testbed/faults"
)

func TestLedgerBooksAcceptedOrders(t *testing.T) {
	batch := func(status ...int) faults.Exchange {
		ops, _ := json.Marshal([]map[string]any{
			{"operationType": "Create", "resourceBody": map[string]any{"id": "ORD-1", "orderId": "ORD-1", "type": "order", "requestHash": "sha256:aa"}},
			{"operationType": "Create", "resourceBody": map[string]any{"id": "ORD-1:event:OrderAccepted", "orderId": "ORD-1", "type": "outboxEvent"}},
		})
		var res []map[string]int
		for _, s := range status {
			res = append(res, map[string]int{"statusCode": s})
		}
		ans, _ := json.Marshal(res)
		h := http.Header{}
		h.Set("x-ms-cosmos-is-batch-request", "True")
		return faults.Exchange{Method: http.MethodPost, Path: "/dbs/shop/colls/orders/docs", Header: h, Body: ops, Status: http.StatusOK, Answer: ans, Fault: -1}
	}
	l := NewLedger()
	l.Observe(batch(409, 424))
	if got := l.Created(); len(got) != 0 {
		t.Fatalf("a conflicting batch was booked: %v", got)
	}
	x := batch(201, 201)
	x.Fault = faults.LostAnswer
	l.Observe(x)
	conflict := faults.Exchange{Method: http.MethodPost, Path: "/dbs/shop/colls/orders/docs", Header: http.Header{}, Status: http.StatusCreated,
		Body: []byte(`{"id":"ORD-1:conflict:bb","orderId":"ORD-1","type":"conflict"}`), Fault: -1}
	l.Observe(conflict)
	got := l.Created()
	if len(got) != 1 || len(got["ORD-1"]) != 1 || got["ORD-1"][0] != "sha256:aa" {
		t.Errorf("created %v, want ORD-1 once with sha256:aa", got)
	}
	if l.Unseen(faults.LostAnswer) != 1 {
		t.Errorf("lost answers of creates %d, want 1", l.Unseen(faults.LostAnswer))
	}
}
