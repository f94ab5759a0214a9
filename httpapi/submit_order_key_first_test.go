package httpapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ordersink/orders-consumer/handler"
	"github.com/ordersink/orders-consumer/handler/handlertest"
	"github.com/ordersink/orders-consumer/orders"
)

// A retry is judged by its key first (docs/http-api.md, rule 2): a setting
// lowered between a request and its retry (a deploy within the key's 24 h)
// does not turn the stored 201 into a 422, and a resend of the stored order
// under a new key is answered as the order it is, not refused by a rule
// that was not in force when it was accepted.
func TestSubmitOrderReplayAfterASettingChangeIsTheFirstAnswer(t *testing.T) {
	keys, store := testKeyStore(t), testStore(t)
	id := fmt.Sprintf("ORD-SETTING-%d", time.Now().UnixNano())
	body := handlertest.OrderWithArray(id, 2000)
	size := handlertest.EventSize(t, body, orders.MessageID(id, body))
	before := startAPIOver(t, keys, store)
	after := startAPIOver(t, keys, store, func(c *config) { c.MaxMessageBytes = size + handler.HeaderAllowance - 1 })

	first := before.submit(t, "k-"+id, body)
	before.wantOrder(t, first, http.StatusCreated, id)

	replay := after.submit(t, "k-"+id, body)
	if replay.StatusCode != first.StatusCode || !bytes.Equal(replay.Body, first.Body) || replay.Header.Get(headerReplayed) != "true" ||
		replay.Header.Get("Location") != first.Header.Get("Location") {
		t.Errorf("retry after MAX_MESSAGE_BYTES went down to %d: %d %.300s; want the first answer replayed: %d %.300s",
			size+handler.HeaderAllowance-1, replay.StatusCode, replay.Body, first.StatusCode, first.Body)
	}
	// The stored order decides before a rule that now refuses it.
	after.wantOrder(t, after.submit(t, "new-key-"+id, body), http.StatusOK, id)
	wantReceipt(t, after.call(t, FunctionSubmitOrder, submitCall("b-"+id, body).by(partnerB)), id)
	// A new order of that size is refused: the rule holds for what it has
	// not accepted yet.
	otherID := id + "-new"
	wantProblem(t, after.submit(t, "k-"+otherID, handlertest.OrderWithArray(otherID, 2000)), http.StatusUnprocessableEntity, "invalid-order")
	wantWritten(t, id)
}

// No outcome depends on the instant (docs/contract.md §3, event size):
// acceptedAt is written at one width, so an order whose event is at its
// budget at one instant is at it at every other, and the retry 0.12 s later
// of a request whose acceptedAt had trailing zeros is its first answer.
func TestSubmitOrderAtTheEventSizeEdgeWhateverTheClock(t *testing.T) {
	const maxMessage = 32 << 10
	budget := maxMessage - handler.HeaderAllowance
	// handlertest.FixedNow's instant has nanoseconds; the first request's has none, so
	// RFC 3339 as time.RFC3339Nano writes it would be ten bytes shorter.
	round := time.Date(2026, 12, 1, 7, 0, 0, 0, time.UTC)
	var now atomic.Pointer[time.Time]
	now.Store(&round)
	clock := func() time.Time { return *now.Load() }
	d := startAPI(t, func(c *config) { c.MaxMessageBytes, c.Processor.Now = maxMessage, clock })
	id := fmt.Sprintf("ORD-EDGE-%d", time.Now().UnixNano())
	size := func(k int) int {
		body := handlertest.OrderWithArray(id, k)
		o, err := orders.ParseOrder(body)
		if err != nil {
			t.Fatal(err)
		}
		b, err := o.AcceptanceDocuments(orders.Acceptance{MessageID: orders.MessageID(id, body), AcceptedAt: round})
		if err != nil {
			t.Fatal(err)
		}
		return handlertest.HostSize(t, b.Event)
	}
	k := (budget - size(0)) / 11 // the host writes each zero indented on a line of its own
	for size(k) > budget {
		k--
	}
	for size(k+1) <= budget {
		k++
	}
	body := handlertest.OrderWithArray(id, k)
	t.Logf("event %d bytes at %s, budget %d", size(k), round.Format(time.RFC3339Nano), budget)

	first := d.submit(t, "k-"+id, body)
	d.wantOrder(t, first, http.StatusCreated, id)
	later := handlertest.FixedNow().Add(120 * time.Millisecond)
	now.Store(&later)
	replay := d.submit(t, "k-"+id, body)
	if replay.StatusCode != http.StatusCreated || !bytes.Equal(replay.Body, first.Body) {
		t.Errorf("retry at %s: %d %.300s; want the first answer", later.Format(time.RFC3339Nano), replay.StatusCode, replay.Body)
	}
	d.wantOrder(t, d.submit(t, "again-"+id, body), http.StatusOK, id)
	var stored map[string]any
	if err := json.Unmarshal(d.storedOrder(t, id), &stored); err != nil || stored["acceptedAt"] != "2026-12-01T07:00:00.000000000Z" {
		t.Errorf("acceptedAt %v, %v; want all nine fraction digits", stored["acceptedAt"], err)
	}
}

// One order per real-world order (docs/http-api.md, "Client retry rules"): a
// producer that falls back from the queue to the HTTP API, a client whose
// scope changed between a request and its retry (a renamed key, App Service
// Authentication switched on) get an answer that ends the submission, and
// nothing is written twice; the queue copy of an order the API stored first
// is a duplicate.
func TestOneOrderPerRealWorldOrder(t *testing.T) {
	d := startAPI(t)

	t.Run("queue first, then the API", func(t *testing.T) {
		id, body := handlertest.UniqueOrder(t)
		if a := d.Invoke(t, handler.FunctionProcessOrder, hostInvocation(body, id, 1)); a.Outcome() != "created" {
			t.Fatalf("ProcessOrder: %q", a.Logs)
		}
		before := d.storedOrder(t, id)
		fallback := d.submit(t, "fallback-"+id, body)
		wantReceipt(t, fallback, id)
		if again := d.submit(t, "fallback-"+id, body); !bytes.Equal(again.Body, fallback.Body) || again.StatusCode != http.StatusOK ||
			again.Header.Get(headerReplayed) != "true" {
			t.Errorf("retry of the fall-back: %d %s", again.StatusCode, again.Body)
		}
		// The receipt answers; it does not hand the queue's order over.
		wantProblem(t, d.get(t, getCall(id)), http.StatusNotFound, "order-not-found")
		if after := d.storedOrder(t, id); !bytes.Equal(after, before) {
			t.Errorf("the stored order changed:\n%s\n%s", before, after)
		}
		wantWritten(t, id)
	})

	t.Run("the API first, then the queue", func(t *testing.T) {
		id, body := handlertest.UniqueOrder(t)
		d.wantOrder(t, d.submit(t, "api-"+id, body), http.StatusCreated, id)
		if a := d.Invoke(t, handler.FunctionProcessOrder, hostInvocation(body, id, 1)); a.Outcome() != "duplicate" {
			t.Errorf("ProcessOrder of the queued copy: %q; want a duplicate", a.Logs)
		}
		wantWritten(t, id)
	})

	for _, tc := range []struct {
		name  string
		retry func(httpCall) httpCall
	}{
		{"the key renamed", func(c httpCall) httpCall { return c.by(partnerB) }},
		{"authentication switched on", func(c httpCall) httpCall {
			c.header = c.header.Clone()
			c.header.Set(headerPrincipalID, "0b6f2c1e-cccc")
			return c
		}},
	} {
		t.Run("scope changed mid-retry: "+tc.name, func(t *testing.T) {
			d := startAPI(t, func(c *config) { c.EasyAuth = true })
			id, body := handlertest.UniqueOrder(t)
			key := "scope-" + id
			d.wantOrder(t, d.submit(t, key, body), http.StatusCreated, id)
			// The first answer was lost; the retry arrives under the new scope.
			wantReceipt(t, d.call(t, FunctionSubmitOrder, tc.retry(submitCall(key, body))), id)
			wantWritten(t, id)
		})
	}
}

// wantReceipt checks the 200 of an order that exists with the caller's
// content but is not the caller's: orderId, requestHash and hashVersion,
// nothing the caller did not send.
func wantReceipt(t *testing.T, a callerAnswer, orderID string) {
	t.Helper()
	if a.StatusCode != http.StatusOK || a.Header.Get("Content-Type") != "application/json" || a.Header.Get("Location") != "" {
		t.Fatalf("%d %v %s; want 200 application/json without Location", a.StatusCode, a.Header, a.Body)
	}
	wantNoStore(t, a)
	var r map[string]any
	if err := json.Unmarshal(a.Body, &r); err != nil {
		t.Fatalf("receipt %s: %v", a.Body, err)
	}
	h, _ := r["requestHash"].(string)
	if len(r) != 3 || r["orderId"] != orderID || !strings.HasPrefix(h, "sha256:") || r["hashVersion"] != float64(orders.HashVersion) {
		t.Errorf("receipt %s; want orderId %s, requestHash and hashVersion only", a.Body, orderID)
	}
}
