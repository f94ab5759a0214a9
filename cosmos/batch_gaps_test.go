package cosmos

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ordersink/orders-consumer/orders"
)

// The batch answers TestBatchCreateJudgesEveryOperation leaves out: the
// 200 form of a batch whose operations all depend on a failure it does not
// name, and a 400 (refused as such, so final).
func TestBatchCreateJudgesTheBoundaryAnswers(t *testing.T) {
	f := newFakeCosmos(t)
	store, err := Open(Options{Endpoint: f.URL + "/", Key: "a2V5"}, "shop", "orders")
	if err != nil {
		t.Fatal(err)
	}
	docs := []orders.NewDocument{docOf("A", "A", 10), docOf("A:event:OrderAccepted", "A", 10)}
	tests := []struct {
		name      string
		status    int
		body      string
		transient bool
		mention   string
	}{
		{"200 with only dependency failures", 200, `[{"statusCode":424},{"statusCode":424}]`, true, "without a cause"},
		{"order refused as bad", 207, `[{"statusCode":400},{"statusCode":424}]`, false, "400"},
		{"event refused as bad", 207, `[{"statusCode":424},{"statusCode":400}]`, false, "operation 1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f.mu.Lock()
			f.batch = func() (int, string) { return tc.status, tc.body }
			f.mu.Unlock()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			exists, err := store.batchCreate(ctx, "create order", "A", docs)
			var se *orders.StoreError
			if exists || !errors.As(err, &se) || se.Transient != tc.transient || !strings.Contains(err.Error(), tc.mention) {
				t.Errorf("exists %v, err %v; want transient %v mentioning %q", exists, err, tc.transient, tc.mention)
			}
		})
	}
}
