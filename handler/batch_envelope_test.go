package handler

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ordersink/orders-consumer/orders"
)

func TestJSONArrayShapes(t *testing.T) {
	tests := []struct {
		raw  string
		want int // elements; -1 for an error
	}{
		{`"[1,null,3]"`, 3},            // what the host sends
		{`"\"[1,2]\""`, 2},             // encoded once more
		{`[1,2]`, 2},                   // a real array
		{` "  [ ]  " `, 0},             // white space
		{`null`, 0},                    // no value
		{``, 0},                        // absent key
		{`"null"`, 0},                  // a null encoded as text
		{`"{\"a\":1}"`, -1},            // an object, not a list
		{`"[1,2"`, -1},                 // truncated
		{`5`, -1},                      // a bare number
		{`"\"\\\"[1]\\\"\""`, -1},      // encoded three times: not a shape anyone sends
		{`{"Documents":"[1]"}`, -1},    // an object
		{`"[\"a\",{\"b\":[]}]"`, 2},    // mixed elements
		{`"[\"\\u00e9t\\u00e9\"]"`, 1}, // escaped text
	}
	for _, tc := range tests {
		got, err := jsonArray(json.RawMessage(tc.raw))
		switch {
		case tc.want < 0 && err == nil:
			t.Errorf("jsonArray(%s) = %s, want an error", tc.raw, got)
		case tc.want >= 0 && (err != nil || len(got) != tc.want):
			t.Errorf("jsonArray(%s) = %d elements, %v; want %d", tc.raw, len(got), err, tc.want)
		}
	}
}

func TestBatchDeliveriesFromFixtures(t *testing.T) {
	tests := []struct {
		file     string
		ids      []string
		counts   []int
		subjects []string
		enqueued []string
	}{
		{"host-batch.json",
			[]string{"ORD-2026-000201", "ORD-2026-000123:status:3", "ORD-2026-000202"},
			[]int{1, 1, 3},
			[]string{"", "OrderStatusChanged", ""},
			[]string{"2026-11-29T10:00:02.123Z", "2026-11-29T12:30:01.456Z", "2026-11-29T09:58:12.7891234Z"}},
		{"real-arrays.json",
			[]string{"ORD-2026-000201", "", ""},
			[]int{1, 2, 0},
			[]string{"", "orderstatuschanged", ""},
			[]string{"2026-11-29T10:00:02Z", "", ""}},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join("testdata", "batch", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			inv, err := decodeInvocation(raw)
			if err != nil {
				t.Fatal(err)
			}
			ds, err := batchDeliveries(inv, "inv-1")
			if err != nil {
				t.Fatal(err)
			}
			if len(ds) != 3 {
				t.Fatalf("%d deliveries, want 3", len(ds))
			}
			for i, d := range ds {
				if d.messageID != tc.ids[i] || d.deliveryCount != tc.counts[i] || d.subject != tc.subjects[i] ||
					d.enqueuedAt != tc.enqueued[i] || d.function != FunctionProcessOrderBatch || d.invocationID != "inv-1" {
					t.Errorf("delivery %d = %+v", i, d)
				}
			}
			if _, err := orders.ParseOrder(ds[0].body); err != nil {
				t.Errorf("message 0 is not the order: %v (%s)", err, ds[0].body)
			}
			if c, err := orders.ParseStatusChange(ds[1].body); err != nil || c.Version != 3 || c.Status != "Shipped" {
				t.Errorf("message 1 is not the status change: %+v %v", c, err)
			}
			if _, err := orders.ParseOrder(ds[2].body); err == nil || !strings.Contains(err.Error(), "unitPrice") {
				t.Errorf("message 2: %v, want the unitPrice rule", err)
			}
		})
	}
}
