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
// outbox event through the events output binding (a Service Bus topic). The
// change feed carries the whole document; the store is needed only to keep
// a document it sets aside that is too large for its envelope.
//
// The change feed is at-least-once, and a failed invocation is not retried
// unless function.json has a retry policy (extension 4.x checkpoints the
// lease after a failure), so the function answers 200 whenever it can and
// leaves deduplication to consumers: a replayed batch republishes the same
// messages, byte for byte, with the same eventId.
// Pattern: Transactional outbox (docs/design-patterns.md#transactional-outbox).
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
		// Setting a document aside may write a parked body: the change feed
		// trigger holds no lock, so the bound is functionTimeout, which
		// MessageDeadline stays below.
		ctx, cancel := context.WithTimeout(r.Context(), cfg.MessageDeadline)
		defer cancel()
		events, poison, err := cfg.sortChanges(ctx, docs, invocationID)
		if err != nil {
			// Nothing is sent: the retry policy replays the whole batch,
			// and consumers deduplicate what it publishes again.
			cfg.Logger.Error("outbox event not set aside, the batch will be retried", "function", FunctionPublishOrderEvents,
				"invocationId", invocationID, "documents", len(docs), "err", err.Error())
			out.Logs = append(out.Logs, fmt.Sprintf("%s: %d documents, none published, will be retried: %v", FunctionPublishOrderEvents, len(docs), err))
			encode(w, cfg.Logger, http.StatusInternalServerError, out)
			return
		}
		skipped := len(poison)
		if len(events) > 0 {
			out.Outputs[EventsBinding] = events
		}
		if skipped > 0 {
			envelopes := make([]*ParkingEnvelope, skipped)
			for k, p := range poison {
				envelopes[k] = p.envelope
				cfg.Logger.Error("outbox event not publishable", "function", FunctionPublishOrderEvents,
					"invocationId", invocationID, "document", p.index, "orderId", p.envelope.OrderID, "err", p.cause.Error())
				out.Logs = append(out.Logs, fmt.Sprintf("%s: document %d not publishable, set aside as %s: %v", FunctionPublishOrderEvents, p.index, p.envelope.Reason, p.cause))
			}
			out.Outputs[ParkingBinding] = envelopes
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

// setAsideDoc is a change-feed document the publisher can never send.
type setAsideDoc struct {
	index    int
	cause    error
	envelope *ParkingEnvelope
}

// sortChanges returns the outbox events of a change-feed batch to publish,
// once each, and the documents it sets aside. The error is a body it could
// not keep (setAside): then nothing of the batch may be sent or said sent.
func (cfg Config) sortChanges(ctx context.Context, docs []json.RawMessage, invocationID string) ([]*orders.OutboxEvent, []setAsideDoc, error) {
	events := make([]*orders.OutboxEvent, 0, len(docs))
	var poison []setAsideDoc
	seen := make(map[string]bool, len(docs))
	for i, doc := range docs {
		e, err := orders.PublishableEvent(doc)
		if err == nil && e != nil {
			err = cfg.fitOutput(e)
		}
		switch {
		case err != nil:
			// It would fail the same way on every replay: set it aside for
			// an operator and publish the rest.
			p, keepErr := cfg.setAside(ctx, doc, err, invocationID)
			if keepErr != nil {
				return nil, nil, fmt.Errorf("document %d: %w", i, keepErr)
			}
			poison = append(poison, setAsideDoc{index: i, cause: err, envelope: p})
		case e == nil: // an order, a conflict record, a status
		case seen[e.EventID]:
		default:
			seen[e.EventID] = true
			events = append(events, e)
		}
	}
	return events, poison, nil
}
