package handler

import (
	"net/http"
	"testing"
	"time"

	"github.com/ordersink/orders-consumer/cosmos"
	"github.com/ordersink/orders-consumer/cosmos/cosmostest"
	"github.com/ordersink/orders-consumer/handler/handlertest"
	"github.com/ordersink/orders-consumer/orders"
	"github.com/ordersink/orders-consumer/retrying"
)

// BenchmarkRecoveryAfterOutage measures, with the production defaults for
// the probe interval and the attempt timeout (cmd/handler), the time from
// Cosmos DB answering again to the first and the last of 16 held
// invocations (host.json maxConcurrentCalls) answering created. Each
// iteration takes seconds: run it with -benchtime=3x.
func BenchmarkRecoveryAfterOutage(b *testing.B) {
	for _, tc := range []struct {
		name  string
		fault cosmostest.Fault
	}{{"refused", cosmostest.Refused}, {"403", cosmostest.Forbidden}, {"silent", cosmostest.Silent}} {
		b.Run(tc.name, func(b *testing.B) {
			env := testEnv(b)
			proxy, err := cosmostest.StartOutageProxy(env.Endpoint)
			if err != nil {
				b.Fatal(err)
			}
			defer proxy.Close()
			store, err := cosmos.Open(cosmos.Options{Endpoint: proxy.URL(), Key: env.Key}, env.Database, env.Container)
			if err != nil {
				b.Fatal(err)
			}
			health := &retrying.Health{ProbeInterval: time.Second}
			srv := startServerWith(b, Config{
				Processor: &orders.Processor{Store: &retrying.Store{Store: store, Health: health, AttemptTimeout: 4 * time.Second,
					Backoff: retrying.Backoff{Initial: 100 * time.Millisecond, Max: time.Second}}},
				MessageDeadline: 30 * time.Second, Health: health,
			})
			var first, last time.Duration
			for b.Loop() {
				proxy.Set(tc.fault)
				const n = 16
				done := make(chan time.Time, n)
				for range n {
					id, body := handlertest.UniqueOrder(b)
					go func() {
						a, err := srv.call(FunctionProcessOrder, hostInvocation(body, id, 1))
						if err != nil || a.Status != http.StatusOK {
							b.Errorf("order %s: status %d, %v", id, a.Status, err)
						}
						done <- time.Now()
					}()
				}
				time.Sleep(6 * time.Second) // long enough for the probes to reach their interval
				back := time.Now()
				proxy.Set(cosmostest.Up)
				f, l := time.Duration(1<<62), time.Duration(0)
				for range n {
					d := (<-done).Sub(back)
					f, l = min(f, d), max(l, d)
				}
				first, last = first+f, last+l
			}
			b.ReportMetric(float64(first.Milliseconds())/float64(b.N), "ms-to-first")
			b.ReportMetric(float64(last.Milliseconds())/float64(b.N), "ms-to-last")
		})
	}
}
