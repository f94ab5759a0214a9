package handler

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"testing"

	"github.com/ordersink/orders-consumer/idempotency"
	"github.com/ordersink/orders-consumer/idempotency/idemtest"
	"github.com/ordersink/orders-consumer/orders"
	"github.com/ordersink/orders-consumer/orders/orderstest"
)

// frontDoorBenchServer is the handler as cmd/handler builds it, over
// zero-latency stores: what remains is the front door's own cost per
// request (decoding, admission, executeOnce, the answer and the order
// output, the log line).
func frontDoorBenchServer() http.Handler {
	keys, store := idemtest.NewMemStore(), orderstest.NewMemStore()
	return NewServer(Config{Processor: &orders.Processor{Store: store}, Idempotency: &idempotency.Service{Store: keys},
		Orders: store, Submissions: keys, Logger: slog.New(slog.NewJSONHandler(io.Discard, nil))})
}

// BenchmarkSubmitOrderInProcess is one POST /SubmitOrder invocation per
// path of executeOnce: a first request (claim and complete), a replay (claim
// refused, read) and a reused key (claim refused, read, refused).
func BenchmarkSubmitOrderInProcess(b *testing.B) {
	const pool = 4096
	reqs := make([][]byte, pool)
	for i := range reqs {
		reqs[i] = hostHTTPInvocation(FunctionSubmitOrder, submitCall(fmt.Sprintf("key-%08d", i), benchOrder(i)))
	}
	b.Run("first", func(b *testing.B) { benchEachOnce(b, frontDoorBenchServer, FunctionSubmitOrder, reqs) })
	b.Run("replay", func(b *testing.B) { benchAfter(b, frontDoorBenchServer(), FunctionSubmitOrder, reqs[0], reqs[0]) })
	b.Run("keyReused", func(b *testing.B) {
		other := hostHTTPInvocation(FunctionSubmitOrder, submitCall("key-00000000", benchOrder(1)))
		benchAfter(b, frontDoorBenchServer(), FunctionSubmitOrder, reqs[0], other)
	})
}
