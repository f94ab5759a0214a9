package handler

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/ordersink/orders-consumer/handler/handlertest"
	"github.com/ordersink/orders-consumer/orders"
)

func TestBatchEnvelopesEachFitTheBudget(t *testing.T) {
	s := budgetServer(t, Config{})
	small := fmt.Sprintf("ORD-SMALL-%d", time.Now().UnixNano())
	large := fmt.Sprintf("ORD-LARGE-%d", time.Now().UnixNano())
	bodies := [][]byte{invalidBody(small, 10), escapingBody(large, 100<<10)}
	a := s.invokeFunction(t, FunctionProcessOrderBatch, hostBatch([]batchMessage{
		{body: bodies[0], messageID: small, deliveryCount: 1}, {body: bodies[1], messageID: large, deliveryCount: 1}}))
	var raws []json.RawMessage
	if a.Status != http.StatusOK || json.Unmarshal(a.Outputs[ParkingBinding], &raws) != nil || len(raws) != 2 {
		t.Fatalf("status %d, parking %s", a.Status, a.Outputs[ParkingBinding])
	}
	for i, raw := range raws {
		if size := handlertest.HostSize(t, raw); size > DefaultMaxMessageBytes-HeaderAllowance {
			t.Errorf("envelope %d is %d bytes as the host sends it", i, size)
		}
		var e ParkingEnvelope
		_ = json.Unmarshal(raw, &e)
		if (e.BodyRef != nil) != (i == 1) || e.BodySHA256 != orders.BodySHA256(bodies[i]) {
			t.Errorf("envelope %d: ref %+v", i, e.BodyRef)
		}
	}
}

func TestBatchParkingEnvelopeFields(t *testing.T) {
	s := startBatchServer(t, testEnv(t).Store, 2)
	id, body := handlertest.UniqueOrder(t)
	bad := bytes.Replace(body, []byte(`"currency":"EUR"`), []byte(`"currency":"eur"`), 1)
	a := s.invokeFunction(t, FunctionProcessOrderBatch, hostBatch([]batchMessage{{bad, id, 3, "OrderPlaced"}}))
	if a.Status != http.StatusOK {
		t.Fatalf("status %d", a.Status)
	}
	var es []map[string]any
	if err := json.Unmarshal(a.Outputs[ParkingBinding], &es); err != nil || len(es) != 1 {
		t.Fatalf("batch parking output %s (err %v), want one envelope object in a list", a.Outputs[ParkingBinding], err)
	}
	wantFields(t, "batch envelope", es[0], map[string]any{
		"reason":          string(orders.ValidationFailed),
		"description":     nil,
		"orderId":         id,
		"messageId":       id,
		"subject":         "OrderPlaced",
		"deliveryCount":   3,
		"body":            string(bad),
		"enqueuedTimeUtc": nil,
		"parkedAt":        nil,
		"function":        FunctionProcessOrderBatch,
		"invocationId":    a.InvocationID,
		"storedHash":      absent,
		"incomingHash":    absent,
	})
	if q, _ := es[0]["enqueuedTimeUtc"].(string); !parsesAsTime(q) {
		t.Errorf("enqueuedTimeUtc %q is not an RFC 3339 time", q)
	}
}
