package handler

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/ordersink/orders-consumer/idempotency"
	"github.com/ordersink/orders-consumer/orders"
)

// SubmissionFinder finds the idempotency key records through which a client
// submitted an order: GetOrder answers "submitted" with one while the order
// is on its way through the queue. cosmos.KeyStore and idemtest.MemStore
// implement it.
type SubmissionFinder interface {
	// FindByOrderID returns the records of client and operation that name
	// orderID, in any state; none when there are none.
	FindByOrderID(ctx context.Context, client, operation, orderID string) ([]idempotency.Record, error)
}

// orderState is GetOrder's answer (docs/http-api.md).
type orderState struct {
	OrderID string `json:"orderId"`
	// State is "accepted" (the consumer stored the order) or "submitted"
	// (SubmitOrder sent it, the consumer has not stored it yet).
	State       string             `json:"state"`
	RequestHash string             `json:"requestHash"`
	MessageID   string             `json:"messageId,omitempty"`
	AcceptedAt  string             `json:"acceptedAt,omitempty"`
	Status      *orders.ViewStatus `json:"status,omitempty"`
	// Conflicts are the newest maxConflictsShown of the ConflictCount
	// resends with other content, oldest first.
	Conflicts     []orders.ViewConflict `json:"conflicts"`
	ConflictCount int                   `json:"conflictCount"`
}

// maxConflictsShown bounds the conflicts GET lists: any caller of
// SubmitOrder can add one per content it sends, and the answer must keep a
// size budget (about 250 bytes a conflict).
const maxConflictsShown = 100

// handleGetOrder is GET /api/orders/{orderId}: the order as the store has
// it, or as its caller submitted it.
func handleGetOrder(cfg Config) http.HandlerFunc {
	return cfg.frontDoor(FunctionGetOrder, func(ctx context.Context, x *exchange, req *httpRequest) map[string]any {
		x.client = clientScope(req, cfg.EasyAuth)
		cfg.lookUp(ctx, x, req.Params["orderId"])
		return nil
	})
}

// lookUp answers with the order's state: its partition in the orders
// container, or else the caller's key record naming it.
func (cfg Config) lookUp(ctx context.Context, x *exchange, orderID string) {
	x.orderID = clip(orderID)
	if cfg.Orders == nil || cfg.Submissions == nil {
		x.fail(errors.New("GetOrder is not configured: the handler has no order reader or no key record finder"))
		return
	}
	if orders.CheckOrderID(orderID) != nil {
		// No order can have such an id (docs/contract.md §3).
		x.refuse("notFound", problemNotFound, "No order has this orderId.")
		return
	}
	docs, err := cfg.Orders.ViewDocuments(ctx, orderID)
	var view *orders.View
	if err == nil {
		view, err = orders.ReadView(orderID, docs)
	}
	if err != nil {
		x.storeFailed(err)
		return
	}
	state := orderState{OrderID: orderID, Status: view.Status, ConflictCount: len(view.Conflicts),
		Conflicts: view.Conflicts[max(0, len(view.Conflicts)-maxConflictsShown):]}
	if o := view.Order; o != nil {
		state.State, state.RequestHash, state.MessageID, state.AcceptedAt = "accepted", o.RequestHash, o.MessageID, o.AcceptedAt
		x.answerJSON("found", state)
		return
	}
	recs, err := cfg.Submissions.FindByOrderID(ctx, x.client, FunctionSubmitOrder, orderID)
	if err != nil {
		x.storeFailed(err)
		return
	}
	if rec, ok := sent(recs); ok {
		state.State, state.RequestHash = "submitted", rec.RequestHash
		x.answerJSON("submitted", state)
		return
	}
	x.refuse("notFound", problemNotFound, "No order with this orderId was accepted, nor submitted by you.")
}

// sent returns a record whose request was answered 2xx, and so sent the
// order: a record still started belongs to a request in flight, or to one
// that failed before its answer (503), and neither sent anything.
func sent(recs []idempotency.Record) (idempotency.Record, bool) {
	for _, r := range recs {
		if r.State == idempotency.Succeeded && r.Response != nil && r.Response.Status/100 == 2 {
			return r, true
		}
	}
	return idempotency.Record{}, false
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
