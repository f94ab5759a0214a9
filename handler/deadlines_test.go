package handler

import (
	"errors"
	"log/slog"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ordersink/orders-consumer/cosmos/cosmostest"
	"github.com/ordersink/orders-consumer/orders"
	"github.com/ordersink/orders-consumer/orders/orderstest"
)

// TestEachFunctionRunsUnderItsOwnDeadline: a ProcessOrderBatch invocation
// answers at BATCH_DEADLINE, which stays below the queue's one-minute lock
// that is never renewed for a batch, not at the single-message
// MESSAGE_DEADLINE (minutes, under a renewed lock); and a ProcessOrder
// invocation holds for its own deadline, not the batch's. Against a Cosmos
// DB that never answers, through the production wiring and clocks
// (cmd/handler's defaults), on virtual time: the deadlines are met exactly.
func TestEachFunctionRunsUnderItsOwnDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := startServerIn(t, productionWiring(newOutageStore(cosmostest.Silent)))
		ids, bodies := [2]string{"ORD-DEADLINE-1", "ORD-DEADLINE-2"}, [2][]byte{}
		for i, id := range ids {
			bodies[i] = orderstest.ExampleBodyWithID(id)
		}
		start := time.Now()
		a := b.invokeFunction(t, FunctionProcessOrderBatch, hostBatch([]batchMessage{{bodies[0], ids[0], 1, ""}, {bodies[1], ids[1], 2, ""}}))
		if took := time.Since(start); a.Status != http.StatusServiceUnavailable || took != DefaultBatchDeadline {
			t.Errorf("batch: status %d after %s, want 503 at BATCH_DEADLINE %s (MESSAGE_DEADLINE is %s)", a.Status, took, DefaultBatchDeadline, DefaultMessageDeadline)
		}

		start = time.Now()
		a = b.invoke(t, hostInvocation(bodies[0], ids[0], 2))
		if took := time.Since(start); a.Status != http.StatusServiceUnavailable || took != DefaultMessageDeadline {
			t.Errorf("single message: status %d after %s, want 503 at MESSAGE_DEADLINE %s (BATCH_DEADLINE is %s)", a.Status, took, DefaultMessageDeadline, DefaultBatchDeadline)
		}
	})
}

// An unset clock (zero, as a Config without the setting has it) gets its
// default; a set one is kept.
func TestClockDefaultsFillOnlyTheUnset(t *testing.T) {
	var unset Config
	unset.setClockDefaults()
	want := [3]time.Duration{DefaultMessageDeadline, DefaultBatchDeadline, DefaultAuthAlarmAfter}
	if got := [3]time.Duration{unset.MessageDeadline, unset.BatchDeadline, unset.AuthAlarmAfter}; got != want {
		t.Errorf("unset clocks became %v, want the defaults %v", got, want)
	}
	set := Config{MessageDeadline: time.Second, BatchDeadline: 2 * time.Second, AuthAlarmAfter: 4 * time.Second}
	set.setClockDefaults()
	want = [3]time.Duration{time.Second, 2 * time.Second, 4 * time.Second}
	if got := [3]time.Duration{set.MessageDeadline, set.BatchDeadline, set.AuthAlarmAfter}; got != want {
		t.Errorf("set clocks became %v, want them kept: %v", got, want)
	}
}

// Only a refusal of the consumer's identity (401, 403) that outlasts
// AUTH_ALARM_AFTER is an ERROR: an operator must act. Any other outage,
// however long, and a refusal younger than that stay WARN.
func TestStoreDownLevel(t *testing.T) {
	const after = time.Minute
	for _, tc := range []struct {
		name    string
		err     error
		downFor time.Duration
		want    slog.Level
	}{
		{"401", &orders.StoreError{Status: http.StatusUnauthorized}, after, slog.LevelError},
		{"403/5301", &orders.StoreError{Status: http.StatusForbidden, SubStatus: 5301}, 2 * after, slog.LevelError},
		{"403", &orders.StoreError{Status: http.StatusForbidden}, after - time.Second, slog.LevelWarn},
		{"503", &orders.StoreError{Status: http.StatusServiceUnavailable}, 10 * after, slog.LevelWarn},
		{"429", &orders.StoreError{Status: http.StatusTooManyRequests}, 10 * after, slog.LevelWarn},
		{"no answer", errors.New("dial tcp: connection refused"), 10 * after, slog.LevelWarn},
	} {
		if got := storeDownLevel(tc.err, tc.downFor, after); got != tc.want {
			t.Errorf("%s down for %s: %s, want %s", tc.name, tc.downFor, got, tc.want)
		}
	}
}
