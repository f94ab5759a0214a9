package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/ordersink/orders-consumer/internal/loopback"
)

// holdingCosmos is a Cosmos endpoint that holds requests without answering:
// the incident a refused connection does not show, because only a deadline
// ends the wait. It answers the account lookup unless holdAccount.
func holdingCosmos(t *testing.T, holdAccount bool) string {
	t.Helper()
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && r.URL.Path == "/" && !holdAccount {
			loc := []map[string]string{{"name": "local", "databaseAccountEndpoint": "http://" + r.Host + "/"}}
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(map[string]any{"writableLocations": loc, "readableLocations": loc,
				"userConsistencyPolicy": map[string]string{"defaultConsistencyLevel": "Session"}})
			return
		}
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(func() {
		close(release)
		srv.Close()
	})
	return srv.URL + "/"
}

// startProgram runs the whole program with the given settings on top of
// the defaults and returns its base URL once it answers the readiness probe.
func startProgram(t *testing.T, settings map[string]string) string {
	t.Helper()
	unsetConfig(t)
	port, err := loopback.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("FUNCTIONS_CUSTOMHANDLER_PORT", strconv.Itoa(port))
	for k, v := range settings {
		t.Setenv(k, v)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx, io.Discard) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run: %v", err)
		}
	})
	url := "http://127.0.0.1:" + strconv.Itoa(port)
	for deadline := time.Now().Add(10 * time.Second); ; {
		resp, err := http.Get(url + "/")
		if err == nil {
			resp.Body.Close()
			return url
		}
		if time.Now().After(deadline) {
			t.Fatalf("no answer on %s: %v", url, err)
		}
		time.Sleep(25 * time.Millisecond) // the host polls every 25 ms too
	}
}

// invokeProcessOrder sends one order as the host does for ProcessOrder
// (binary trigger: base64 body, scalars JSON-encoded) and returns the status
// and the parking envelope's reason and deliveryCount, if any. Its deadline
// is far below the SDK's own 65 s per attempt: a handler that ignored
// COSMOS_OPERATION_TIMEOUT would still be waiting for the held request.
func invokeProcessOrder(t *testing.T, url string, deliveryCount int) (status int, reason string, parkedAt int) {
	t.Helper()
	body := `{"orderId":"ORD-SET-1","customerId":"CUST-42","currency":"EUR","lines":[{"sku":"SKU-1","quantity":1,"unitPrice":"5.00"}],"total":"5.00","placedAt":"2026-11-29T10:00:00Z"}`
	inv := fmt.Sprintf(`{"Data":{"message":%q},"Metadata":{"MessageId":"\"ORD-SET-1\"","DeliveryCount":"%d","EnqueuedTimeUtc":"2026-11-29T10:00:02"}}`,
		base64.StdEncoding.EncodeToString([]byte(body)), deliveryCount)
	req, _ := http.NewRequest(http.MethodPost, url+"/ProcessOrder", bytes.NewReader([]byte(inv)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Azure-Functions-InvocationId", fmt.Sprintf("inv-settings-%d", deliveryCount))
	client := &http.Client{Timeout: 20 * time.Second}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("delivery %d: %v (the held Cosmos request was not bounded)", deliveryCount, err)
	}
	defer resp.Body.Close()
	var answer struct {
		Outputs struct {
			Parking *struct {
				Reason        string `json:"reason"`
				DeliveryCount int    `json:"deliveryCount"`
			} `json:"parking"`
		}
	}
	if resp.StatusCode == http.StatusOK {
		if err := json.NewDecoder(resp.Body).Decode(&answer); err != nil {
			t.Fatalf("delivery %d: answer not JSON: %v", deliveryCount, err)
		}
	}
	if p := answer.Outputs.Parking; p != nil {
		return resp.StatusCode, p.Reason, p.DeliveryCount
	}
	return resp.StatusCode, "", 0
}

// TestSettingsReachTheRunningHandler shows through the program's own
// configuration path that RETRY_BUDGET_DELIVERY_COUNT and
// COSMOS_OPERATION_TIMEOUT change what the handler does: against a Cosmos
// that holds every request, each delivery ends at the operation timeout, and
// with a budget of 3 the third delivery parks instead of the default ninth.
func TestSettingsReachTheRunningHandler(t *testing.T) {
	for _, tc := range []struct {
		name        string
		holdAccount bool
	}{
		{"data requests held", false},
		// azcosmos runs the first account lookup detached from the caller's
		// context (context.WithoutCancel, 60 s of its own).
		{"account lookup held", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url := startProgram(t, map[string]string{
				"COSMOS_ENDPOINT":             holdingCosmos(t, tc.holdAccount),
				"COSMOS_KEY":                  "a2V5",
				"RETRY_BUDGET_DELIVERY_COUNT": "3",
				"COSMOS_OPERATION_TIMEOUT":    "300ms",
				"MESSAGE_DEADLINE":            "1s",
			})
			for _, step := range []struct {
				delivery int
				status   int
				reason   string
			}{
				{1, http.StatusServiceUnavailable, ""},
				{2, http.StatusServiceUnavailable, ""},
				{3, http.StatusOK, "RetryBudgetExhausted"},
			} {
				status, reason, parkedAt := invokeProcessOrder(t, url, step.delivery)
				if status != step.status || reason != step.reason || (reason != "" && parkedAt != step.delivery) {
					t.Errorf("delivery %d: status %d, parked %q at delivery %d; want %d, parked %q",
						step.delivery, status, reason, parkedAt, step.status, step.reason)
				}
			}
		})
	}
}

// TestSubmitDeadlineReachesTheRunningHandler shows through the program's own
// wiring that SubmitOrder is served (the key container, the service) and
// that SUBMIT_DEADLINE bounds it: against a Cosmos that holds every request,
// the caller gets 503 with Retry-After just after the deadline, far inside
// the SDK's own 65 s per attempt.
func TestSubmitDeadlineReachesTheRunningHandler(t *testing.T) {
	const deadline = 500 * time.Millisecond
	url := startProgram(t, map[string]string{
		"COSMOS_ENDPOINT": holdingCosmos(t, false),
		"COSMOS_KEY":      "a2V5",
		"SUBMIT_DEADLINE": deadline.String(),
	})
	body := `{"orderId":"ORD-SET-2","customerId":"CUST-42","currency":"EUR","lines":[{"sku":"SKU-1","quantity":1,"unitPrice":"5.00"}],"total":"5.00","placedAt":"2026-11-29T10:00:00Z"}`
	req := map[string]any{"Url": "http://127.0.0.1:7071/api/orders", "Method": "POST", "Query": map[string]string{},
		"Headers": map[string][]string{"Idempotency-Key": {"k-1"}, "Content-Type": {"application/json"}, "Content-Length": {fmt.Sprint(len(body))}}, "Body": body}
	inv, _ := json.Marshal(map[string]any{"Data": map[string]any{"req": req}, "Metadata": map[string]any{}})
	start := time.Now()
	resp, err := (&http.Client{Timeout: 20 * time.Second}).Post(url+"/SubmitOrder", "application/json", bytes.NewReader(inv))
	if err != nil {
		t.Fatalf("SubmitOrder: %v (the held Cosmos request was not bounded)", err)
	}
	defer resp.Body.Close()
	took := time.Since(start)
	var answer struct {
		Outputs struct {
			Res struct {
				StatusCode int               `json:"statusCode"`
				Headers    map[string]string `json:"headers"`
			} `json:"res"`
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&answer); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("host answer %d, %v", resp.StatusCode, err)
	}
	if res := answer.Outputs.Res; res.StatusCode != http.StatusServiceUnavailable || res.Headers["Retry-After"] == "" {
		t.Errorf("caller's answer %+v, want 503 with Retry-After", res)
	}
	if took < deadline || took > deadline+3*time.Second {
		t.Errorf("answered after %s, want just after SUBMIT_DEADLINE %s", took, deadline)
	}
}
