package handler

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/ordersink/orders-consumer/handler/handlertest"
)

// The host builds each ...Array metadata key from the same messages as the
// bodies, but the handler does not trust the lengths to agree: a longer
// array is read up to the number of bodies, a shorter one leaves the rest
// empty, and neither fails the batch.
func TestBatchMetadataArraysOfAnotherLength(t *testing.T) {
	s := startBatchServer(t, testEnv(t).Store, 2)
	id, body := handlertest.UniqueOrder(t)
	var inv map[string]map[string]json.RawMessage
	if err := json.Unmarshal(hostBatch([]batchMessage{{body, id, 1, "OrderPlaced"}}), &inv); err != nil {
		t.Fatal(err)
	}
	inv["Metadata"]["MessageIdArray"] = json.RawMessage(handlertest.Enc(handlertest.Enc([]string{id, "a-message-without-a-body"})))
	inv["Metadata"]["SubjectArray"] = json.RawMessage(handlertest.Enc(handlertest.Enc([]string{"OrderPlaced", "OrderPlaced", "OrderPlaced"})))
	inv["Metadata"]["DeliveryCountArray"] = json.RawMessage(handlertest.Enc(handlertest.Enc([]int{})))
	request, _ := json.Marshal(inv)
	a := s.invokeFunction(t, FunctionProcessOrderBatch, request)
	if a.Status != http.StatusOK || len(a.outcomes()) != 1 || a.outcomes()[0] != "created" {
		t.Fatalf("status %d, outcomes %v, logs %v: want the one message created", a.Status, a.outcomes(), a.Logs)
	}
	if n := len(handlertest.DocumentsOfType(partition(t, id), "order")); n != 1 {
		t.Errorf("orders stored = %d, want 1", n)
	}
}
