package bench

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ordersink/orders-consumer/cosmos/cosmostest"
	"github.com/ordersink/orders-consumer/handler"
	"github.com/ordersink/orders-consumer/testbed/hostemu"
)

// OrderBody is an order of the contract's example shape (two lines, meta)
// under id; customer varies the content, so the same id with another
// customer is a mismatch.
func OrderBody(id, customer string) []byte {
	return fmt.Appendf(nil, `{"orderId":%q,"customerId":%q,"currency":"EUR",`+
		`"lines":[{"sku":"SKU-1","quantity":2,"unitPrice":"19.99"},{"sku":"SKU-7","quantity":1,"unitPrice":"5.00"}],`+
		`"total":"44.98","placedAt":"2026-11-29T10:00:00Z","meta":{"sentAt":"2026-11-29T10:00:01.123Z","producer":"bench"}}`,
		id, customer)
}

// StatusBody is an OrderStatusChanged body.
func StatusBody(id, status string, version int64) []byte {
	return fmt.Appendf(nil, `{"orderId":%q,"status":%q,"version":%d,"changedAt":"2026-11-29T12:30:00Z"}`, id, status, version)
}

// app is the function app as the host reads it (host.json and every
// function.json), so requests are encoded for the bindings as deployed:
// ProcessOrder's trigger is binary (base64 body), ProcessOrderBatch's an
// array of strings.
var app = sync.OnceValues(func() (*hostemu.App, error) {
	root, err := cosmostest.RepoRoot()
	if err != nil {
		return nil, err
	}
	return hostemu.LoadApp(root)
})

// encoder writes requests exactly as the Functions host does; it is the
// local host emulator's, tested against the examples of docs/host-wire-format.md §1.6.
var encoder = &hostemu.Encoder{Namespace: "bench.servicebus.windows.net", ClientID: "bench"}

// delivery is a message's first delivery as the broker hands it to the
// host.
func delivery(body []byte, messageID, subject string) hostemu.Delivery {
	return hostemu.Delivery{
		Message: &hostemu.Message{Body: body, MessageID: messageID, ContentType: "application/json",
			Subject: subject, EnqueuedTime: time.Now()},
		DeliveryCount: 1, LockToken: "9d2f6c1e-7b7a-4c55-8a3e-1f0e2d3c4b5a",
	}
}

// newOrder is a new order's first delivery.
func newOrder(id string) hostemu.Delivery { return delivery(OrderBody(id, "CUST-1"), id, "") }

func function(name string) (*hostemu.Function, error) {
	a, err := app()
	if err != nil {
		return nil, err
	}
	fn := a.Function(name)
	if fn == nil {
		return nil, fmt.Errorf("the function app has no %s/function.json", name)
	}
	return fn, nil
}

// SingleInvocation encodes a delivery as the Functions host sends it to
// POST /ProcessOrder.
func SingleInvocation(d hostemu.Delivery) ([]byte, error) {
	fn, err := function(handler.FunctionProcessOrder)
	if err != nil {
		return nil, err
	}
	return encoder.Single(fn, d)
}

// BatchInvocation encodes deliveries as the host sends them to
// POST /ProcessOrderBatch.
func BatchInvocation(ds []hostemu.Delivery) ([]byte, error) {
	fn, err := function(handler.FunctionProcessOrderBatch)
	if err != nil {
		return nil, err
	}
	return encoder.Batch(fn, ds)
}

// RunID is a short prefix that keeps the order ids of one run apart from
// those of earlier runs against the same container.
func RunID() string {
	return strings.ToUpper(strconv.FormatInt(time.Now().UnixNano()%(36*36*36*36*36*36), 36))
}
