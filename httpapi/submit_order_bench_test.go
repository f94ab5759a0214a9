package httpapi

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"testing"

	"github.com/ordersink/orders-consumer/handler"
	"github.com/ordersink/orders-consumer/handler/handlertest"
	"github.com/ordersink/orders-consumer/idempotency"
	"github.com/ordersink/orders-consumer/idempotency/idemtest"
	"github.com/ordersink/orders-consumer/orders"
	"github.com/ordersink/orders-consumer/orders/orderstest"
)

// apiBenchServer is the handler as cmd/handler builds it, over zero-latency
// stores: what remains is the HTTP API's own cost per request (decoding,
// admission, executeOnce, the batch, the answer, the log line).
func apiBenchServer() http.Handler {
	keys, store := idemtest.NewMemStore(), orderstest.NewMemStore()
	return newServer(config{Config: handler.Config{Processor: &orders.Processor{Store: store}, Orders: store},
		Functions: Functions{Idempotency: &idempotency.Service{Store: keys}}}, slog.New(slog.NewJSONHandler(io.Discard, nil)))
}

// BenchmarkSubmitOrderInProcess is one POST /SubmitOrder invocation per
// path of executeOnce: a first request (claim, batch, complete), a replay
// (claim refused, read), a reused key (claim refused, read, refused), and a
// GET of the created order (one read).
func BenchmarkSubmitOrderInProcess(b *testing.B) {
	const pool = 4096
	reqs := make([][]byte, pool)
	for i := range reqs {
		reqs[i] = hostHTTPInvocation(FunctionSubmitOrder, submitCall(fmt.Sprintf("key-%08d", i), handlertest.BenchOrder(i)))
	}
	b.Run("first", func(b *testing.B) { handlertest.BenchEachOnce(b, apiBenchServer, FunctionSubmitOrder, reqs) })
	b.Run("replay", func(b *testing.B) { handlertest.BenchAfter(b, apiBenchServer(), FunctionSubmitOrder, reqs[0], reqs[0]) })
	b.Run("keyReused", func(b *testing.B) {
		other := hostHTTPInvocation(FunctionSubmitOrder, submitCall("key-00000000", handlertest.BenchOrder(1)))
		handlertest.BenchAfter(b, apiBenchServer(), FunctionSubmitOrder, reqs[0], other)
	})
	b.Run("get", func(b *testing.B) {
		srv := apiBenchServer()
		handlertest.BenchInvoke(b, srv, FunctionSubmitOrder, reqs[0])
		get := hostHTTPInvocation(FunctionGetOrder, getCall("ORD-B-00000000"))
		b.ReportAllocs()
		for b.Loop() {
			handlertest.BenchInvoke(b, srv, FunctionGetOrder, get)
		}
	})
}
