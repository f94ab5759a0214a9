package handler

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/ordersink/orders-consumer/handler/handlertest"
	"github.com/ordersink/orders-consumer/orders"
	"github.com/ordersink/orders-consumer/orders/orderstest"
)

// The in-process benchmarks run the handler over orderstest.MemStore, a
// zero-latency store: what remains is the handler's own CPU and memory per
// message. The log is formatted as in production (JSON) into io.Discard.
// testbed/cmd/benchreport runs them for docs/evidence/benchmarks.md.

// benchServer is the handler as cmd/handler builds it, over a fresh MemStore.
func benchServer() http.Handler {
	return NewServer(Config{
		Processor: &orders.Processor{Store: orderstest.NewMemStore()},
		Logger:    slog.New(slog.NewJSONHandler(io.Discard, nil)),
	})
}

// BenchmarkDecodeEnvelope is the cost of merely reading a host invocation:
// the envelope, the double-encoded body and the metadata the handler uses.
func BenchmarkDecodeEnvelope(b *testing.B) {
	raw := hostInvocation([]byte(orderstest.ExampleBody), "ORD-2026-000123", 1)
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		inv, err := decodeInvocation(raw)
		if err != nil {
			b.Fatal(err)
		}
		if _, _, err := inv.triggerText(TriggerBinding); err != nil {
			b.Fatal(err)
		}
		metaString(inv.Metadata.MessageId)
		metaInt(inv.Metadata.DeliveryCount)
		metaString(inv.Metadata.Subject)
		if s, ok := metaString(inv.Metadata.EnqueuedTimeUtc); ok {
			parseHostTime(s)
		}
	}
}

// BenchmarkProcessOrderInProcess is one invocation of POST /ProcessOrder end
// to end in process (request decode, validation, fingerprint, documents,
// store call, answer, log line) for a new order and for a duplicate.
func BenchmarkProcessOrderInProcess(b *testing.B) {
	const pool = 4096
	reqs := make([][]byte, pool)
	for i := range reqs {
		reqs[i] = hostInvocation(handlertest.BenchOrder(i), fmt.Sprintf("ORD-B-%08d", i), 1)
	}
	b.Run("new", func(b *testing.B) { handlertest.BenchEachOnce(b, benchServer, FunctionProcessOrder, reqs) })
	b.Run("duplicate", func(b *testing.B) { handlertest.BenchAfter(b, benchServer(), FunctionProcessOrder, reqs[0], reqs[0]) })
}

// BenchmarkProcessOrderBatchInProcess is one POST /ProcessOrderBatch
// invocation of 100 new orders; ns/msg is the time per message.
func BenchmarkProcessOrderBatchInProcess(b *testing.B) {
	const size, pool = 100, 64
	reqs := make([][]byte, pool)
	for i := range reqs {
		msgs := make([]batchMessage, size)
		for j := range msgs {
			msgs[j] = batchMessage{body: handlertest.BenchOrder(i*size + j), messageID: fmt.Sprintf("ORD-B-%08d", i*size+j), deliveryCount: 1}
		}
		reqs[i] = hostBatch(msgs)
	}
	b.ReportAllocs()
	srv := benchServer()
	i := 0
	for b.Loop() {
		if i == pool {
			b.StopTimer()
			srv, i = benchServer(), 0
			b.StartTimer()
		}
		handlertest.BenchInvoke(b, srv, FunctionProcessOrderBatch, reqs[i])
		i++
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*size), "ns/msg")
}

// BenchmarkPublishOrderEventsInProcess is one POST /PublishOrderEvents
// invocation of a change feed batch of 100 accepted orders: their order
// documents and their outbox events.
func BenchmarkPublishOrderEventsInProcess(b *testing.B) {
	var docs []json.RawMessage
	for i := range 100 {
		o, err := orders.ParseOrder(handlertest.BenchOrder(i))
		if err != nil {
			b.Fatal(err)
		}
		batch, err := o.AcceptanceDocuments(orders.Acceptance{MessageID: o.ID, AcceptedAt: time.Date(2026, 11, 29, 10, 0, 2, 0, time.UTC)})
		if err != nil {
			b.Fatal(err)
		}
		for _, d := range batch.Documents {
			docs = append(docs, d.Body)
		}
	}
	req := hostChangeFeed(docs)
	srv := benchServer()
	b.ReportAllocs()
	for b.Loop() {
		handlertest.BenchInvoke(b, srv, FunctionPublishOrderEvents, req)
	}
}
