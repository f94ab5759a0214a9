package httpapi

import (
	"context"
	"errors"
	"net/http"

	"github.com/ordersink/orders-consumer/handler"
	"github.com/ordersink/orders-consumer/orders"
)

// handleGetOrder is GET /api/orders/{orderId} (docs/http-api.md): one point
// read of the order, answered only to the client that owns it.
func handleGetOrder(cfg config) http.HandlerFunc {
	return cfg.httpFunction(FunctionGetOrder, func(ctx context.Context, x *exchange, req *handler.HTTPRequest) {
		cfg.lookUp(ctx, x, req.Params["orderId"])
	})
}

// lookUp answers with the caller's order. Every order the caller may not
// read (none, another client's, the queue path's) gets the very same 404,
// so that the answer never tells that an orderId exists.
func (cfg config) lookUp(ctx context.Context, x *exchange, orderID string) {
	x.orderID = handler.Clip(orderID)
	if cfg.Orders == nil {
		x.fail(errors.New("GetOrder is not configured: the handler has no order reader"))
		return
	}
	notFound := func(outcome string) {
		x.refuse(outcome, problemNotFound, "You have no order with this orderId.")
	}
	if orders.CheckOrderID(orderID) != nil {
		// No order can have such an id (docs/contract.md §3).
		notFound("notFound")
		return
	}
	doc, err := cfg.Orders.ReadOrder(ctx, orderID)
	if err != nil {
		x.storeFailed(err)
		return
	}
	if doc == nil {
		notFound("notFound")
		return
	}
	stored, err := orders.ParseStoredFingerprint(doc)
	if err != nil {
		x.fail(err)
		return
	}
	if stored.Owner == "" || stored.Owner != x.client {
		notFound("notOwner") // the log line may tell; the answer must not
		return
	}
	if err := x.found(orderID, doc); err != nil {
		x.fail(err)
	}
}
