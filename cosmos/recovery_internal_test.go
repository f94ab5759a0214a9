package cosmos

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
)

// TestRecoveryRebuildsOnlyForFailuresThatMayBeCached: until the data plane
// has answered once, the SDK may be holding a failed account lookup, so a
// failure that may come from it (no answer, 401, 403, 5xx) makes the Store
// build a new client, at most once per rebuildInterval; any other answer
// (404, 409, 412, 429…) shows the account was read, and the Store is ready:
// nothing is rebuilt after it.
func TestRecoveryRebuildsOnlyForFailuresThatMayBeCached(t *testing.T) {
	answer := func(status int) error {
		return fmt.Errorf("create order: %w", &azcore.ResponseError{StatusCode: status})
	}
	for _, tc := range []struct {
		name    string
		err     error
		ready   bool
		rebuilt int
	}{
		{"success", nil, true, 0},
		{"404", answer(http.StatusNotFound), true, 0},
		{"409", answer(http.StatusConflict), true, 0},
		{"412", answer(http.StatusPreconditionFailed), true, 0},
		{"429", answer(http.StatusTooManyRequests), true, 0},
		{"499", answer(499), true, 0},
		{"no answer", context.DeadlineExceeded, false, 1},
		{"connection refused", errors.New("dial tcp 127.0.0.1:1: connect: connection refused"), false, 1},
		{"401", answer(http.StatusUnauthorized), false, 1},
		{"403", answer(http.StatusForbidden), false, 1},
		{"500", answer(http.StatusInternalServerError), false, 1},
		{"503", answer(http.StatusServiceUnavailable), false, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Open(Options{Endpoint: "http://127.0.0.1:1/", Key: "a2V5"}, "shop", "orders")
			if err != nil {
				t.Fatal(err)
			}
			first := s.conn.Load()
			s.observe(first, tc.err)
			s.observe(first, tc.err) // a failure on a replaced client says nothing
			cur := s.conn.Load()
			ready, rebuilt := first.answered.Load(), cur != first
			if ready != tc.ready || rebuilt != (tc.rebuilt > 0) {
				t.Errorf("after %v twice: ready %v, rebuilt %v; want ready %v, %d rebuilds", tc.err, ready, rebuilt, tc.ready, tc.rebuilt)
			}
			if rebuilt {
				s.observe(cur, tc.err) // within rebuildInterval: no second rebuild
				if s.conn.Load() != cur {
					t.Errorf("after %v on the new client at once: rebuilt again within rebuildInterval", tc.err)
				}
			}
		})
	}
}
