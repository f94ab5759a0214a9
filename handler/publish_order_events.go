package handler

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/ordersink/orders-consumer/orders"
)

// handlePublishOrderEvents is the outbox publisher: a cosmosDBTrigger on the
// orders container hands it every new or changed document, and it sends each
// outbox event through the events output binding (a Service Bus topic). It
// needs no store: the change feed carries the whole document.
//
// The change feed is at-least-once, and a failed invocation is not retried
// unless function.json has a retry policy (extension 4.x checkpoints the
// lease after a failure), so the function answers 200 whenever it can and
// leaves deduplication to consumers: a replayed batch republishes the same
// messages, byte for byte, with the same eventId.
func handlePublishOrderEvents(cfg Config) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		start := cfg.Now()
		invocationID := r.Header.Get("X-Azure-Functions-InvocationId")
		// The extension hands the host the documents as JSON array text,
		// which the host encodes once more as a JSON string
		// (testdata/changefeed/README.md).
		inv, err := readInvocation(w, r, cfg.MaxBatchRequestBytes)
		var docs []json.RawMessage
		if err == nil {
			docs, err = inv.dataArray(DocumentsBinding)
		}
		if err != nil {
			cfg.undecodable(w, FunctionPublishOrderEvents, invocationID, err)
			return
		}

		out := newResult()
		events := make([]*orders.OutboxEvent, 0, len(docs))
		var poison []*ParkingEnvelope
		seen := make(map[string]bool, len(docs))
		for i, doc := range docs {
			e, err := orders.PublishableEvent(doc)
			if err == nil && e != nil {
				err = cfg.fitOutput(e)
			}
			switch {
			case err != nil:
				// It would fail the same way on every replay: set it
				// aside for an operator and publish the rest.
				p := cfg.setAside(doc, err, invocationID)
				cfg.Logger.Error("outbox event not publishable", "function", FunctionPublishOrderEvents,
					"invocationId", invocationID, "document", i, "orderId", p.OrderID, "err", err.Error())
				out.Logs = append(out.Logs, fmt.Sprintf("%s: document %d not publishable, set aside as %s: %v", FunctionPublishOrderEvents, i, p.Reason, err))
				poison = append(poison, p)
			case e == nil: // an order, a conflict record, a status
			case seen[e.EventID]:
			default:
				seen[e.EventID] = true
				events = append(events, e)
			}
		}
		skipped := len(poison)
		if len(events) > 0 {
			out.Outputs[EventsBinding] = events
		}
		if skipped > 0 {
			out.Outputs[ParkingBinding] = poison
		}
		for _, e := range events {
			out.Logs = append(out.Logs, fmt.Sprintf("%s: published %s", FunctionPublishOrderEvents, e.EventID))
		}
		out.Logs = append(out.Logs, fmt.Sprintf("%s: %d documents, %d events published", FunctionPublishOrderEvents, len(docs), len(events)))
		level := slog.LevelInfo
		if skipped > 0 {
			level = slog.LevelError
		}
		cfg.Logger.LogAttrs(context.Background(), level, "publish",
			slog.String("function", FunctionPublishOrderEvents),
			slog.String("invocationId", invocationID),
			slog.Int("documents", len(docs)),
			slog.Int("published", len(events)),
			slog.Int("unpublishable", skipped),
			slog.Float64("durationMs", float64(time.Since(start).Microseconds())/1000))
		encode(w, cfg.Logger, http.StatusOK, out)
	}
}
