package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/ordersink/orders-consumer/cosmos"
	"github.com/ordersink/orders-consumer/cosmos/cosmostest"
	"github.com/ordersink/orders-consumer/httpapi"
	"github.com/ordersink/orders-consumer/idempotency"
)

// cosmosEnv is a fresh database on the Cosmos DB of the integration tests
// (COSMOS_ENDPOINT, or a local emulator started for the test), for a whole
// program started by startProgram. It must be called before startProgram,
// which clears COSMOS_ENDPOINT.
func cosmosEnv(t *testing.T) *cosmostest.Env {
	t.Helper()
	if testing.Short() {
		t.Skip("needs Cosmos DB; -short runs without it")
	}
	env, err := cosmostest.Start("cmd-handler")
	if err != nil {
		t.Fatalf("this test needs Cosmos DB: %v", err)
	}
	t.Cleanup(env.Close)
	return env
}

// programSettings points the program at env's database, through endpoint
// (env's own, or a proxy in front of it), with more settings on top.
func programSettings(env *cosmostest.Env, endpoint string, more map[string]string) map[string]string {
	s := map[string]string{"COSMOS_ENDPOINT": endpoint, "COSMOS_KEY": env.Key, "COSMOS_DATABASE": env.Database,
		"COSMOS_CONTAINER": env.Container, "IDEMPOTENCY_CONTAINER": cosmos.KeyContainer}
	for k, v := range more {
		s[k] = v
	}
	return s
}

// TestOperationTimeoutCutsAHungAttempt: COSMOS_OPERATION_TIMEOUT bounds one
// attempt of a Cosmos operation, and the attempt after it runs. With the
// first Cosmos request of the order's create held unanswered, the delivery
// is answered with the order created: an attempt left to run would hold
// the delivery until MESSAGE_DEADLINE, which answers 503. (The cut itself is
// timed on virtual time by retrying's TestRetryingCutsAHungAttempt.)
func TestOperationTimeoutCutsAHungAttempt(t *testing.T) {
	env := cosmosEnv(t)
	proxy, err := cosmostest.StartOutageProxy(env.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(proxy.Close)
	const messageDeadline = 10 * time.Second
	p := startProgram(t, programSettings(env, proxy.URL(), map[string]string{
		"COSMOS_OPERATION_TIMEOUT": "500ms",
		"MESSAGE_DEADLINE":         messageDeadline.String(),
	}))
	proxy.Set(cosmostest.SilentOnce)
	status, reason, _ := invokeProcessOrder(t, p, 1)
	if status != http.StatusOK || reason != "" {
		t.Fatalf("status %d, parked %q; want the order created by the attempt after the hung one", status, reason)
	}
	if held := proxy.Held.Load(); held != 1 {
		t.Fatalf("%d requests held, want 1: the test did not hang an attempt", held)
	}
	docs, err := env.Store.PartitionDocuments(context.Background(), "ORD-SET-1")
	if err != nil || len(docs) != 2 {
		t.Errorf("partition ORD-SET-1: %d documents, %v; want the order and its event", len(docs), err)
	}
}

// TestKeyTTLReachesTheRecord: IDEMPOTENCY_KEY_TTL, not the 24 h default, is
// the ttl of the key record a SubmitOrder request leaves in Cosmos DB, read
// through the program's own configuration and wiring.
func TestKeyTTLReachesTheRecord(t *testing.T) {
	env := cosmosEnv(t)
	p := startProgram(t, programSettings(env, env.Endpoint, map[string]string{"IDEMPOTENCY_KEY_TTL": "2h"}))
	const key = "k-ttl-1"
	body := `{"orderId":"ORD-TTL-1","customerId":"CUST-42","currency":"EUR","lines":[{"sku":"SKU-1","quantity":1,"unitPrice":"5.00"}],"total":"5.00","placedAt":"2026-11-29T10:00:00Z"}`
	req := map[string]any{"Url": "http://127.0.0.1:7071/api/orders", "Method": "POST", "Query": map[string]string{},
		"Headers": map[string][]string{"Idempotency-Key": {key}, "Content-Type": {"application/json"}, "Content-Length": {strconv.Itoa(len(body))}}, "Body": body}
	inv, _ := json.Marshal(map[string]any{"Data": map[string]any{"req": req}, "Metadata": map[string]any{}})
	resp, err := p.client.Post(p.url+"/"+httpapi.FunctionSubmitOrder, "application/json", bytes.NewReader(inv))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var answer struct {
		Outputs struct {
			Res struct {
				StatusCode int `json:"statusCode"`
			} `json:"res"`
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&answer); err != nil || resp.StatusCode != http.StatusOK || answer.Outputs.Res.StatusCode/100 != 2 {
		t.Fatalf("host answer %d (%v), caller's answer %d; want the order accepted", resp.StatusCode, err, answer.Outputs.Res.StatusCode)
	}
	// A caller without a function key or principal is "anonymous" (handler's
	// client scope).
	id := idempotency.Scope{Client: "anonymous", Operation: httpapi.FunctionSubmitOrder, Key: key}.ID()
	raw, err := env.Keys.Document(context.Background(), id)
	var record struct {
		TTL   int64  `json:"ttl"`
		State string `json:"state"`
	}
	if err != nil || raw == nil || json.Unmarshal(raw, &record) != nil {
		t.Fatalf("key record %s: %s, %v", id, raw, err)
	}
	if record.TTL != 7200 {
		t.Errorf("key record %s: ttl %v, state %s; want 7200 (IDEMPOTENCY_KEY_TTL 2h)", id, record.TTL, record.State)
	}
}
