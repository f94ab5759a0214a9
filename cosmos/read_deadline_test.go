package cosmos_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/ordersink/orders-consumer/cosmos"
	"github.com/ordersink/orders-consumer/orders"
)

// GetOrder may be a fresh client's first request, whose account lookup
// azcosmos detaches from the caller's context: its read (ReadOrder), like
// ordersctl's (PartitionDocuments), must still end at its deadline
// (cosmos/recovery.go), as TestOperationDeadlineEndsAHeldAccountLookup
// shows for CreateOrder.
func TestReadsEndAtTheirDeadlineWhenTheAccountLookupIsHeld(t *testing.T) {
	for name, read := range map[string]func(context.Context, *cosmos.Store) error{
		"ReadOrder": func(ctx context.Context, s *cosmos.Store) error {
			_, err := s.ReadOrder(ctx, "ORD-1")
			return err
		},
		"PartitionDocuments": func(ctx context.Context, s *cosmos.Store) error {
			_, err := s.PartitionDocuments(ctx, "ORD-1")
			return err
		},
	} {
		t.Run(name, func(t *testing.T) {
			release := make(chan struct{})
			held := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				select {
				case <-r.Context().Done():
				case <-release:
				}
			}))
			defer held.Close()
			defer close(release)
			store, err := cosmos.Open(cosmos.Options{Endpoint: held.URL + "/", Key: "a2V5"}, "shop", "orders")
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
			defer cancel()
			done := make(chan error, 1)
			go func() { done <- read(ctx, store) }()
			select {
			case err := <-done:
				var se *orders.StoreError
				if !errors.As(err, &se) || !se.Transient || !errors.Is(err, context.DeadlineExceeded) {
					t.Errorf("err %v, want a transient StoreError for the missed deadline", err)
				}
			case <-time.After(20 * time.Second): // the SDK's own lookup timeout is 60 s
				t.Fatalf("%s outlived its 200 ms deadline by 20 s", name)
			}
		})
	}
}
