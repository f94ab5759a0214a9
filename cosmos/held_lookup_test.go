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
	"github.com/ordersink/orders-consumer/orders/orderstest"
)

// azcosmos sends the account lookup before a client's first request
// detached from the caller's context; the operation's deadline must still
// end it (cosmos/recovery.go), whichever operation comes first: a
// consumer's CreateOrder, GetOrder's ReadOrder, ordersctl's
// PartitionDocuments.
func TestOperationDeadlineEndsAHeldAccountLookup(t *testing.T) {
	for name, read := range map[string]func(context.Context, *cosmos.Store) error{
		"CreateOrder": func(ctx context.Context, s *cosmos.Store) error {
			_, err := s.CreateOrder(ctx, orderstest.Batch(t, newOrder(t), orders.Acceptance{MessageID: "m", AcceptedAt: time.Now()}))
			return err
		},
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
				if !errors.As(err, &se) || !se.Transient() || !errors.Is(err, context.DeadlineExceeded) {
					t.Errorf("err %v, want a transient StoreError for the missed deadline", err)
				}
			case <-time.After(20 * time.Second): // the SDK's own lookup timeout is 60 s
				t.Fatalf("%s outlived its 200 ms deadline by 20 s", name)
			}
		})
	}
}
