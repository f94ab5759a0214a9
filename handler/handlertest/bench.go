package handlertest

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/ordersink/orders-consumer/orders/orderstest"
)

// BenchOrder is the example order under the orderId ORD-B-<i>, eight digits.
func BenchOrder(i int) []byte {
	return orderstest.ExampleBodyWithID(fmt.Sprintf("ORD-B-%08d", i))
}

// BenchInvoke invokes function on srv in process; the benchmark fails
// unless the host is answered 200.
func BenchInvoke(b *testing.B, srv http.Handler, function string, request []byte) {
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/"+function, bytes.NewReader(request)))
	if rec.Code != http.StatusOK {
		b.Fatalf("%d %s", rec.Code, rec.Body.Bytes())
	}
}

// BenchEachOnce invokes function with each request of reqs once per
// iteration, in turn; when all are used (every id or key taken) it starts
// over, untimed, with a new server.
func BenchEachOnce(b *testing.B, newServer func() http.Handler, function string, reqs [][]byte) {
	b.ReportAllocs()
	srv, i := newServer(), 0
	for b.Loop() {
		if i == len(reqs) {
			b.StopTimer()
			srv, i = newServer(), 0
			b.StartTimer()
		}
		BenchInvoke(b, srv, function, reqs[i])
		i++
	}
}

// BenchAfter invokes function with first once, untimed, then with again
// once per iteration.
func BenchAfter(b *testing.B, srv http.Handler, function string, first, again []byte) {
	b.ReportAllocs()
	BenchInvoke(b, srv, function, first)
	for b.Loop() {
		BenchInvoke(b, srv, function, again)
	}
}
