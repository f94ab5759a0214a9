package cosmos_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ordersink/orders-consumer/cosmos/cosmostest"
	"github.com/ordersink/orders-consumer/orders"
)

// Helpers of the store tests that the suite (store_test.go) does not cover.

func testEnv(t *testing.T) *cosmostest.Env { return cosmosDB.Env(t) }

func newOrder(t *testing.T) *orders.Order {
	t.Helper()
	id := fmt.Sprintf("ORD-%s-%d", strings.ReplaceAll(t.Name(), "/", "-"), time.Now().UnixNano())
	o, err := orders.ParseOrder(fmt.Appendf(nil, `{"orderId":%q,"customerId":"CUST-42","currency":"EUR","lines":[{"sku":"SKU-1","quantity":2,"unitPrice":"19.99"}],"total":"39.98","placedAt":"2026-11-29T10:00:00Z"}`, id))
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func typesIn(t *testing.T, e *cosmostest.Env, orderID string) []string {
	t.Helper()
	docs, err := e.Store.PartitionDocuments(context.Background(), orderID)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]string, 0, len(docs))
	for _, d := range docs {
		var v struct {
			Type string `json:"type"`
		}
		_ = json.Unmarshal(d, &v)
		out = append(out, v.Type)
	}
	return out
}
