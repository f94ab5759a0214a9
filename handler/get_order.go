package handler

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/ordersink/orders-consumer/idempotency"
	"github.com/ordersink/orders-consumer/orders"
)

// SubmissionFinder finds the idempotency key record through which a client
// submitted an order: GetOrder answers "submitted" with it while the order
// is on its way through the queue. cosmos.KeyStore and idemtest.MemStore
// implement it.
type SubmissionFinder interface {
	// FindByOrderID returns a record of client and operation that names
	// orderID, or idempotency.ErrNotFound.
	FindByOrderID(ctx context.Context, client, operation, orderID string) (idempotency.Record, error)
}

// orderState is GetOrder's answer (docs/http-api.md).
type orderState struct {
	OrderID string `json:"orderId"`
	// State is "accepted" (the consumer stored the order) or "submitted"
	// (SubmitOrder sent it, the consumer has not stored it yet).
	State       string                `json:"state"`
	RequestHash string                `json:"requestHash"`
	MessageID   string                `json:"messageId,omitempty"`
	AcceptedAt  string                `json:"acceptedAt,omitempty"`
	Status      *orders.ViewStatus    `json:"status,omitempty"`
	Conflicts   []orders.ViewConflict `json:"conflicts"`
}

// handleGetOrder is GET /api/orders/{orderId}: the order as the store has
// it, or as its caller submitted it.
func handleGetOrder(cfg Config) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		start := cfg.Now()
		x := exchange{function: FunctionGetOrder, invocationID: r.Header.Get("X-Azure-Functions-InvocationId")}
		ctx, cancel := context.WithTimeout(r.Context(), cfg.SubmitDeadline)
		defer cancel()
		ctx, charge := orders.WithRequestCharge(ctx)
		if req, ok := x.readRequest(w, r, cfg.MaxRequestBytes); ok {
			x.client = clientScope(req)
			cfg.lookUp(ctx, &x, req.Params["orderId"])
		}
		x.requestCharge = charge.Units()
		cfg.finish(w, &x, nil, start)
	}
}

// lookUp answers with the order's state: its partition in the orders
// container, or else the caller's key record naming it.
func (cfg Config) lookUp(ctx context.Context, x *exchange, orderID string) {
	x.orderID = orderID
	if cfg.Orders == nil || cfg.Submissions == nil {
		x.fail(errors.New("GetOrder is not configured: the handler has no order reader or no key record finder"))
		return
	}
	if orders.CheckOrderID(orderID) != nil {
		// No order can have such an id (docs/contract.md §3).
		x.refuse("notFound", problemNotFound, "No order has this orderId.")
		return
	}
	docs, err := cfg.Orders.PartitionDocuments(ctx, orderID)
	var view *orders.View
	if err == nil {
		view, err = orders.ReadView(orderID, docs)
	}
	if err != nil {
		x.storeFailed(err)
		return
	}
	state := orderState{OrderID: orderID, Status: view.Status, Conflicts: view.Conflicts}
	if o := view.Order; o != nil {
		state.State, state.RequestHash, state.MessageID, state.AcceptedAt = "accepted", o.RequestHash, o.MessageID, o.AcceptedAt
		x.answerJSON("found", state)
		return
	}
	rec, err := cfg.Submissions.FindByOrderID(ctx, x.client, FunctionSubmitOrder, orderID)
	switch {
	case errors.Is(err, idempotency.ErrNotFound):
		x.refuse("notFound", problemNotFound, "No order with this orderId was accepted, nor submitted by you.")
	case err != nil:
		x.storeFailed(err)
	default:
		state.State, state.RequestHash = "submitted", rec.RequestHash
		x.answerJSON("submitted", state)
	}
}

// answerJSON answers 200 with v.
func (x *exchange) answerJSON(outcome string, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		x.fail(err)
		return
	}
	x.outcome = outcome
	x.res = httpResponse{StatusCode: http.StatusOK, Headers: map[string]string{"Content-Type": "application/json"}, Body: string(b)}
}
