package handler

import (
	"bytes"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ordersink/orders-consumer/orders"
	"github.com/ordersink/orders-consumer/orders/orderstest"
)

// TestBatchRoutesRefuseOversizedRequests: the batch and change feed routes
// read at most MaxBatchRequestBytes into memory; a larger request is failed
// (the broker or the change feed keeps the messages), nothing is written,
// and the log says why. The single-message route parks instead
// (TestProcessOrderOversizedRequestIsParked).
func TestBatchRoutesRefuseOversizedRequests(t *testing.T) {
	const limit = 64 << 10
	msgs := make([]batchMessage, 200) // ~60 KB of bodies, well over the limit once encoded twice
	for i := range msgs {
		id := fmt.Sprintf("ORD-L-%04d", i)
		msgs[i] = batchMessage{body: orderstest.ExampleBodyWithID(id), messageID: id, deliveryCount: 1}
	}
	batch := hostBatch(msgs)
	feed := []byte(fmt.Sprintf(`{"Data":{"documents":%q},"Metadata":{}}`, "["+strings.Repeat(`{"id":"x","type":"outboxEvent"},`, 3000)+`{}]`))
	for _, tc := range []struct {
		function string
		request  []byte
	}{
		{FunctionProcessOrderBatch, batch},
		{FunctionPublishOrderEvents, feed},
	} {
		t.Run(tc.function, func(t *testing.T) {
			if len(tc.request) <= limit {
				t.Fatalf("request of %d bytes is not over the limit", len(tc.request))
			}
			store := orderstest.NewMemStore()
			logs := &orderstest.Buffer{}
			srv := NewServer(Config{Processor: &orders.Processor{Store: store}, Logger: slog.New(slog.NewJSONHandler(logs, nil)),
				MaxBatchRequestBytes: limit})
			rec := httptest.NewRecorder()
			srv.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/"+tc.function, bytes.NewReader(tc.request)))
			if rec.Code/100 == 2 {
				t.Errorf("answer %d for a request over the limit; want a failure so nothing is lost", rec.Code)
			}
			if store.Orders() != 0 {
				t.Errorf("%d orders written from a refused request", store.Orders())
			}
			if !strings.Contains(logs.String(), "request body too large") {
				t.Errorf("log does not say the request was too large: %s", logs.String())
			}
		})
	}
}
