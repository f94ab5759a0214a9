package handler

import (
	"net/http"
	"strings"
	"testing"

	"github.com/ordersink/orders-consumer/cosmos/cosmostest"
	"github.com/ordersink/orders-consumer/handler/handlertest"
	"github.com/ordersink/orders-consumer/orders"
)

// Real Cosmos answers a transactional batch whose operation failed for a
// cause the others depend on; a 200 whose operations all failed with 424
// (no cause named) is not success, whatever the HTTP status says.
func TestBatchAnswer200WithOnlyDependencyFailuresIsRetried(t *testing.T) {
	s, tr := transportServer(t)
	id, body := handlertest.UniqueOrder(t)
	tr.Before(func(kind string, r *http.Request) *http.Response {
		if kind == "BATCH" {
			return cosmostest.Answer(r, http.StatusOK, `[{"statusCode":424,"requestCharge":1.2},{"statusCode":424,"requestCharge":1.2}]`)
		}
		return nil
	})
	a := s.invoke(t, hostInvocation(body, id, 1))
	if a.Status/100 == 2 {
		t.Fatalf("status %d, logs %v: a batch that wrote nothing must not complete the message", a.Status, a.Logs)
	}
	if logs := s.logsOf(a); !strings.Contains(logs, `"outcome":"transient"`) || !strings.Contains(logs, "without a cause") {
		t.Errorf("log %s, want a transient outcome naming the causeless batch failure", logs)
	}
}

// An operation Cosmos refuses as such (400) will be refused on every
// delivery: the message is parked at once, not retried until its budget.
func TestBatchOperationRefusedWith400IsParked(t *testing.T) {
	s, tr := transportServer(t)
	id, body := handlertest.UniqueOrder(t)
	tr.Before(func(kind string, r *http.Request) *http.Response {
		if kind == "BATCH" {
			return cosmostest.Answer(r, http.StatusMultiStatus, `[{"statusCode":400,"requestCharge":1.2},{"statusCode":424,"requestCharge":1.2}]`)
		}
		return nil
	})
	a := s.invoke(t, hostInvocation(body, id, 1))
	e := a.parked(t)
	if a.Status != http.StatusOK || e == nil || e.Reason != orders.ValidationFailed || !strings.Contains(e.Description, "400") {
		t.Fatalf("status %d, parked %+v: want ValidationFailed naming the 400", a.Status, e)
	}
}
