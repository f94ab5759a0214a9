package handler

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/ordersink/orders-consumer/internal/requestcharge"
	"github.com/ordersink/orders-consumer/orders"
)

// delivery is one message as the host delivered it.
type delivery struct {
	function      string
	invocationID  string
	messageID     string
	deliveryCount int
	enqueuedAt    string
	subject       string // the message type (orders.ParseMessageType)
	body          []byte
	// metadataCopied: the host copied the body's top-level members into
	// Metadata (a string trigger value holding a JSON object).
	metadataCopied bool
	// priorDeliveries counts the deliveries of the message this one was
	// requeued for (requeue.go); they are part of deliveryCount.
	priorDeliveries int
}

func handleProcessOrder(cfg Config) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		start := cfg.Now()
		d := delivery{function: FunctionProcessOrder, invocationID: r.Header.Get("X-Azure-Functions-InvocationId")}

		// One deadline for deciding and for keeping a parked body (answer).
		ctx, cancel := context.WithTimeout(r.Context(), cfg.MessageDeadline)
		defer cancel()
		res, ok := d.read(w, r, cfg.MaxRequestBytes)
		if ok {
			res = cfg.process(ctx, d)
		}
		cfg.answer(ctx, w, d, res, start)
	}
}

// process decides one delivery. When the host copied the body's members into
// Metadata, a member named like a key the handler reads has overwritten it,
// and the message is refused rather than handled with forged metadata.
func (cfg Config) process(ctx context.Context, d delivery) orders.Result {
	if d.metadataCopied {
		if keys := shadowedKeys(d.body); len(keys) > 0 {
			return orders.Result{Outcome: orders.Invalid, Reason: orders.ValidationFailed,
				OrderID: orders.PeekOrderID(d.body),
				Description: fmt.Sprintf("body field(s) %s share a name with Service Bus metadata, which the Functions host overwrote with them; rename them (or bind the trigger with \"dataType\": \"binary\")",
					strings.Join(keys, ", "))}
		}
	}
	ctx, charge := requestcharge.With(ctx)
	res := cfg.Processor.Process(ctx, d.message())
	res.RequestCharge = charge.Units()
	return res
}

// read decodes the invocation into d. When the request cannot be decoded it
// returns the result to answer with and false.
func (d *delivery) read(w http.ResponseWriter, r *http.Request, limit int64) (orders.Result, bool) {
	inv, err := readInvocation(w, r, limit)
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		// A message the broker accepted always fits a request of the
		// configured size, so this is a setting to raise, not a message to
		// judge: it stays whole in the broker (the batch route does the
		// same), and is logged at ERROR.
		err = fmt.Errorf("%w: the request is larger than %d bytes (MAX_REQUEST_BYTES, which must exceed the largest message the queue takes, encoded by the host)", errEnvelope, limit)
	} else if err == nil {
		d.body, d.metadataCopied, err = inv.triggerText(TriggerBinding)
	}
	if err != nil {
		// Not the message's fault: the host hung up, or sent what is not a
		// well-formed envelope (a renamed binding, a tool's bug). Completing
		// and parking would cut the message to what the request shows;
		// failing keeps it whole in the broker, which redelivers it and in
		// the end dead-letters it. An envelope error is logged at ERROR.
		return orders.Result{Outcome: orders.Transient, Description: err.Error(), Err: err}, false
	}
	d.messageID, _ = metaString(inv.Metadata.MessageId)
	d.deliveryCount, _ = metaInt(inv.Metadata.DeliveryCount)
	d.subject, _ = metaString(inv.Metadata.Subject)
	if d.subject == "" {
		// Extension 4.x names it Label; 5.x sends both.
		d.subject, _ = metaString(inv.Metadata.Label)
	}
	if s, ok := metaString(inv.Metadata.EnqueuedTimeUtc); ok {
		if t, ok := parseHostTime(s); ok {
			d.enqueuedAt = t.Format(time.RFC3339)
		}
	}
	d.unwrapRequeued()
	return orders.Result{}, true
}

func (d delivery) message() orders.Message {
	return orders.Message{Body: d.body, MessageID: d.messageID, DeliveryCount: d.deliveryCount, Type: orders.MessageType(d.subject)}
}

// answer maps a result to the host answer of docs/contract.md §5 and logs it.
func (cfg Config) answer(ctx context.Context, w http.ResponseWriter, d delivery, res orders.Result, start time.Time) {
	out := newResult()
	if res.Outcome.Parks() {
		var e *ParkingEnvelope
		if e, res = cfg.park(ctx, d, res, cfg.Now()); e != nil {
			out.Outputs[ParkingBinding] = e
		}
	}
	out.Logs = append(out.Logs, d.humanLine(res))
	status := http.StatusOK
	if !res.Outcome.Completes() {
		status = http.StatusServiceUnavailable
	}
	cfg.logInvocation(d, res, time.Since(start))
	encode(w, cfg.Logger, status, out)
}

func (d delivery) envelope(res orders.Result, now time.Time) *ParkingEnvelope {
	e := &ParkingEnvelope{
		Reason: res.Reason, Description: res.Description, OrderID: res.OrderID,
		MessageID: d.messageID, Subject: d.subject, DeliveryCount: d.deliveryCount,
		StoredHash: res.StoredHash, IncomingHash: res.IncomingHash,
		EnqueuedAt: d.enqueuedAt,
		ParkedAt:   parkedAt(now), Function: d.function, InvocationID: d.invocationID,
	}
	e.setBody(d.body)
	return e
}

func (d delivery) humanLine(res orders.Result) string {
	id := LogValue(res.OrderID)
	if res.OrderID == "" {
		id = "message " + LogValue(d.messageID)
	}
	if res.Kind == orders.OrderStatusChanged {
		id += fmt.Sprintf(" status v%d", res.Version)
	}
	line := fmt.Sprintf("%s: %s %s (delivery %d)", d.function, res.Outcome, id, d.deliveryCount)
	if res.Reason != "" {
		line += fmt.Sprintf(", parked as %s: %s", res.Reason, logText(res.Description))
	} else if res.Outcome == orders.Transient || res.Outcome == requeued {
		line += ", will be retried: " + logText(res.Description)
	}
	return line
}

// logInvocation writes the structured line operators query; mismatches are
// logged at error level because they are the alarm (an id reused for other
// content).
func (cfg Config) logInvocation(d delivery, res orders.Result, took time.Duration) {
	level := slog.LevelInfo
	switch res.Outcome {
	case orders.Mismatch:
		level = slog.LevelError
	case orders.Transient, orders.Exhausted:
		level = slog.LevelWarn
		if errors.Is(res.Err, errEnvelope) {
			level = slog.LevelError // configuration, not load: someone must act
		}
		if cfg.Health != nil {
			if down, since := cfg.Health.Down(); down {
				level = max(level, storeDownLevel(res.Err, time.Since(since), cfg.AuthAlarmAfter))
			}
		}
	case orders.Invalid, requeued:
		level = slog.LevelWarn
	case orders.Stale:
		if res.VersionConflict {
			level = slog.LevelWarn
		}
	}
	attrs := []slog.Attr{
		slog.String("function", d.function),
		slog.String("invocationId", d.invocationID),
		slog.String("messageId", d.messageID),
		slog.String("orderId", res.OrderID),
		slog.String("outcome", string(res.Outcome)),
		slog.Int("deliveryCount", d.deliveryCount),
		slog.Float64("durationMs", float64(took.Microseconds())/1000),
	}
	if res.Reason != "" {
		attrs = append(attrs, slog.String("reason", string(res.Reason)), slog.String("description", res.Description))
	}
	if res.MessageIDDiffers {
		attrs = append(attrs, slog.Bool("messageIdDiffers", true))
	}
	if res.RequestCharge > 0 {
		attrs = append(attrs, slog.Float64("requestCharge", res.RequestCharge))
	}
	if res.DuplicateCause != "" {
		attrs = append(attrs, slog.String("duplicateCause", string(res.DuplicateCause)))
	}
	if d.priorDeliveries > 0 {
		attrs = append(attrs, slog.Int("priorDeliveries", d.priorDeliveries))
	}
	var se *orders.StoreError
	if errors.As(res.Err, &se) && se.Status != 0 {
		attrs = append(attrs, slog.Int("status", se.Status), slog.Int("subStatus", se.SubStatus))
	}
	if res.Kind == orders.OrderStatusChanged {
		// Stale messages are counted by outcome; the versions say how far
		// behind they were.
		attrs = append(attrs, slog.String("messageType", string(res.Kind)), slog.Int64("version", res.Version),
			slog.Int64("storedVersion", res.StoredVersion), slog.Int("attempts", res.Attempts))
		if res.Outcome == orders.Stale {
			attrs = append(attrs, slog.String("description", res.Description))
		}
	}
	if res.Err != nil {
		attrs = append(attrs, slog.String("err", res.Err.Error()))
	}
	cfg.Logger.LogAttrs(context.Background(), level, "invocation", attrs...)
}
