package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/ordersink/orders-consumer/handler"
	"github.com/ordersink/orders-consumer/handler/handlertest"
	"github.com/ordersink/orders-consumer/orders"
)

// GET answers an order only to its owner; everyone else gets the 404 of an
// unknown orderId, so the answer never tells that an orderId exists.
func TestGetOrderAnswersOnlyTheOwner(t *testing.T) {
	d := startAPI(t)
	id, body := handlertest.UniqueOrder(t)
	created := d.submit(t, "k-"+id, body)
	d.wantOrder(t, created, http.StatusCreated, id)

	mine := d.get(t, getCall(id))
	d.wantOrder(t, mine, http.StatusOK, id)
	if !bytes.Equal(mine.Body, created.Body) {
		t.Errorf("GET %s, the 201 was %s", mine.Body, created.Body)
	}
	if !strings.Contains(d.LogsOf(mine.Answer), `"outcome":"found"`) {
		t.Errorf("log %s", d.LogsOf(mine.Answer))
	}

	unknown := "ORD-never-seen-" + strings.ReplaceAll(t.Name(), "/", "-")
	notYours := d.get(t, getCall(id).by(partnerB))
	none := d.get(t, getCall(unknown).by(partnerB))
	wantSame404(t, notYours, none, id, unknown)
	// Nobody without a key (a local run's anonymous client) either.
	anonymous := getCall(id)
	anonymous.keyName = ""
	wantSame404(t, d.get(t, anonymous), d.get(t, getCall(unknown)), id, unknown)
}

// wantSame404 checks that two 404s are the same answer but for what names
// the request (its path, its invocation).
func wantSame404(t *testing.T, a, b callerAnswer, idA, idB string) {
	t.Helper()
	pa, pb := wantProblem(t, a, http.StatusNotFound, "order-not-found"), wantProblem(t, b, http.StatusNotFound, "order-not-found")
	if pa.Instance != ordersPath+"/"+url.PathEscape(idA) || pb.Instance != ordersPath+"/"+url.PathEscape(idB) {
		t.Errorf("instances %q, %q; want the paths", pa.Instance, pb.Instance)
	}
	normal := func(c callerAnswer, p problem, id string) string {
		return strings.NewReplacer(url.PathEscape(id), "{orderId}", c.InvocationID, "{invocationId}").Replace(string(c.Body))
	}
	if x, y := normal(a, pa, idA), normal(b, pb, idB); x != y {
		t.Errorf("the 404s differ:\n%s\n%s", x, y)
	}
	if a.headerNames() != b.headerNames() {
		t.Errorf("404 headers differ: %s / %s", a.headerNames(), b.headerNames())
	}
}

// The queue path's orders belong to no client of the API: operators see
// them with ordersctl.
func TestGetOrderOfTheQueuePathIsNotFound(t *testing.T) {
	d := startAPI(t)
	id, body := handlertest.UniqueOrder(t)
	if r := d.Invoke(t, handler.FunctionProcessOrder, hostInvocation(body, id, 1)); !strings.Contains(r.Logs[0], "created "+id) {
		t.Fatalf("ProcessOrder: %q", r.Logs[0])
	}
	anonymous := getCall(id)
	anonymous.keyName = ""
	for _, c := range []httpCall{getCall(id), anonymous} {
		wantProblem(t, d.get(t, c), http.StatusNotFound, "order-not-found")
	}
}

func TestGetOrderUnknownOrImpossibleIDs(t *testing.T) {
	d := startAPI(t)
	for _, id := range []string{"ORD-never-seen-" + strings.Repeat("0", 8), strings.Repeat("x", 256), " padded"} {
		wantProblem(t, d.get(t, getCall(id)), http.StatusNotFound, "order-not-found")
	}
}

// failingReader is an order store that cannot be read.
type failingReader struct{ err error }

func (f failingReader) ReadOrder(context.Context, string) (json.RawMessage, error) {
	return nil, f.err
}

func TestGetOrderStoreDown(t *testing.T) {
	for _, tc := range []struct {
		name   string
		err    *orders.StoreError
		status int
		anchor string
	}{
		{"transient", &orders.StoreError{Op: "read order", Status: 503, SubStatus: 3, IsTransient: true, Err: errors.New("503 sekrit activity 42")}, 503, "service-unavailable"},
		{"permanent", &orders.StoreError{Op: "read order", Status: 400, SubStatus: 1001, Err: errors.New("400 sekrit query")}, 500, "internal-error"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := startAPI(t, func(c *config) { c.Orders = failingReader{tc.err} })
			a := d.get(t, getCall("ORD-1"))
			wantProblem(t, a, tc.status, tc.anchor)
			if a.Header.Get("Retry-After") == "" {
				t.Error("no Retry-After")
			}
			if !strings.Contains(d.LogsOf(a.Answer), "sekrit") {
				t.Errorf("the log lacks the store's error: %s", d.LogsOf(a.Answer))
			}
			if want := fmt.Sprintf(`"status":%d,"subStatus":%d`, tc.err.Status, tc.err.SubStatus); !strings.Contains(d.LogsOf(a.Answer), want) {
				t.Errorf("the log lacks the store's %s: %s", want, d.LogsOf(a.Answer))
			}
		})
	}
}
