package handler

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ordersink/orders-consumer/cosmos/cosmostest"
	"github.com/ordersink/orders-consumer/handler/handlertest"
	"github.com/ordersink/orders-consumer/orders"
)

// The failure windows of the store that the local emulator never opens on
// its own (a lagging replica, a writer in between a read and its replace, a
// batch answer only real Cosmos gives), opened by a transport in front of the
// emulator and driven through the handler as the host drives it.

// transportServer serves the handler over a Store whose Cosmos requests pass
// through a recording Transport.
func transportServer(t *testing.T) (*testServer, *cosmostest.Transport) {
	t.Helper()
	tr := cosmostest.NewTransport()
	store, err := testEnv(t).StoreVia(tr)
	if err != nil {
		t.Fatal(err)
	}
	return startServer(t, store, 0), tr
}

const notFoundBody = `{"code":"NotFound","message":"Entity with the specified id does not exist in the system."}`

// A duplicate's batch fails on the existing order (409), and the point read
// of the stored fingerprint may then be served by a replica that has not
// seen the order yet (404). The read is retried, so the duplicate is judged
// on this delivery instead of burning one.
func TestDuplicateWhoseFingerprintReadMissesAtFirst(t *testing.T) {
	s, tr := transportServer(t)
	id, body := handlertest.UniqueOrder(t)
	if a := s.invoke(t, hostInvocation(body, id, 1)); a.Status != http.StatusOK || a.Outcome() != "created" {
		t.Fatalf("create: %d %v", a.Status, a.Logs)
	}
	var mu sync.Mutex
	misses := 1
	tr.Before(func(kind string, r *http.Request) *http.Response {
		mu.Lock()
		defer mu.Unlock()
		if kind == "READ" && misses > 0 {
			misses--
			return cosmostest.Answer(r, http.StatusNotFound, notFoundBody)
		}
		return nil
	})
	a := s.invoke(t, hostInvocation(body, id, 2))
	if a.Status != http.StatusOK || a.Outcome() != "duplicate" {
		t.Fatalf("status %d, logs %v: a read that missed once must be retried", a.Status, a.Logs)
	}
	reads := tr.Exchanges("READ")
	if len(reads) != 2 || reads[0].Status != http.StatusNotFound || reads[1].Status != http.StatusOK {
		t.Errorf("reads %+v, want a missed read and one that found the order", reads)
	}

	t.Run("a read that keeps missing gives the message back, bounded", func(t *testing.T) {
		mu.Lock()
		misses = 1000
		mu.Unlock()
		before := len(tr.Exchanges("READ"))
		a := s.invoke(t, hostInvocation(body, id, 3))
		if a.Status/100 == 2 {
			t.Fatalf("status %d: an order that cannot be read must not be completed", a.Status)
		}
		if n := len(tr.Exchanges("READ")) - before; n < 2 || n > 5 {
			t.Errorf("%d reads, want a few retries and then the broker's turn", n)
		}
	})
}

// A status replace that loses the race to another writer (412 on If-Match)
// reads again and decides again. The competitor writes between our read and
// our replace, so the 412 is the emulator's own answer to our If-Match.
func TestStatusReplaceThatLosesARaceReadsAgain(t *testing.T) {
	s, tr := transportServer(t)
	other := testEnv(t).Store
	id, _ := handlertest.UniqueOrder(t)
	if a := s.invoke(t, statusInvocation(t, id, "Placed", 1, 1)); a.Status != http.StatusOK || a.Outcome() != "applied" {
		t.Fatalf("first status: %d %v", a.Status, a.Logs)
	}
	competitor := competeBeforeFirstReplace(tr, other, id, "Paid", 2)
	a := s.invoke(t, statusInvocation(t, id, "Shipped", 3, 1))
	if err := competitor(); err != nil {
		t.Fatalf("competing writer: %v", err)
	}
	if a.Status != http.StatusOK || a.Outcome() != "applied" {
		t.Fatalf("status %d, logs %v: a lost race must be read again, not requeued", a.Status, a.Logs)
	}
	if logs := s.logsOf(a); !strings.Contains(logs, `"attempts":2`) || !strings.Contains(logs, `"storedVersion":2`) {
		t.Errorf("log %s, want 2 attempts over the competitor's v2", logs)
	}
	assertConditionalReplaces(t, tr.Exchanges("READ", "REPLACE"), []int{http.StatusPreconditionFailed, http.StatusOK})
	if got := storedStatus(t, id); got["status"] != "Shipped" || got["version"] != float64(3) {
		t.Errorf("stored status %v, want Shipped v3", got)
	}

	t.Run("the competitor wrote a newer version", func(t *testing.T) {
		competitor := competeBeforeFirstReplace(tr, other, id, "Delivered", 9)
		a := s.invoke(t, statusInvocation(t, id, "Returned", 4, 1))
		if err := competitor(); err != nil {
			t.Fatalf("competing writer: %v", err)
		}
		if a.Status != http.StatusOK || a.Outcome() != "stale" {
			t.Fatalf("status %d, logs %v", a.Status, a.Logs)
		}
		if got := storedStatus(t, id); got["status"] != "Delivered" || got["version"] != float64(9) {
			t.Errorf("stored status %v: the older write overwrote the newer one", got)
		}
	})
}

// assertConditionalReplaces checks that every replace carried If-Match with
// the ETag of the read just before it, and that the replaces got statuses.
func assertConditionalReplaces(t *testing.T, exchanges []cosmostest.Exchange, statuses []int) {
	t.Helper()
	var got []int
	lastETag := ""
	for _, e := range exchanges {
		switch e.Kind {
		case "READ":
			lastETag = e.ETag
		case "REPLACE":
			got = append(got, e.Status)
			if e.IfMatch == "" || e.IfMatch != lastETag {
				t.Errorf("replace If-Match %q, want the ETag %q of the read before it", e.IfMatch, lastETag)
			}
		}
	}
	if len(got) != len(statuses) || !equalInts(got, statuses) {
		t.Errorf("replace statuses %v, want %v", got, statuses)
	}
}

func equalInts(a, b []int) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return len(a) == len(b)
}

// competeBeforeFirstReplace makes another consumer instance write a status,
// through its own client, just before the next replace the handler sends;
// the returned function reports how that write went.
func competeBeforeFirstReplace(tr *cosmostest.Transport, other orders.StatusStore, orderID, status string, version int64) func() error {
	var once sync.Once
	var err error
	tr.Before(func(kind string, r *http.Request) *http.Response {
		if kind == "REPLACE" {
			once.Do(func() { err = applyStatusDirectly(other, orderID, status, version) })
		}
		return nil
	})
	return func() error { return err }
}

func applyStatusDirectly(store orders.StatusStore, orderID, status string, version int64) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	at := time.Now()
	r, err := store.ApplyStatus(ctx, orders.StatusChange{OrderID: orderID, Status: status, Version: version, ChangedAt: at}, "competitor", at)
	if err == nil && !r.Applied {
		err = errors.New("the competitor's status was not applied")
	}
	return err
}
