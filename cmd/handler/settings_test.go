package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ordersink/orders-consumer/internal/loopback"
	"github.com/ordersink/orders-consumer/internal/pipetest"
)

// heldCosmos is a Cosmos endpoint that holds requests without answering:
// the incident a refused connection does not show, because only a deadline
// ends the wait. It answers the account lookup unless holdAccount.
type heldCosmos struct {
	url string
	mu  sync.Mutex
	at  []time.Time // when each held request came
}

// holdingCosmos serves a heldCosmos on n.
func holdingCosmos(t *testing.T, n *pipetest.Network, holdAccount bool) *heldCosmos {
	t.Helper()
	c := &heldCosmos{}
	release := make(chan struct{})
	t.Cleanup(func() { close(release) }) // when the test ends, after the server closes
	c.url = n.Serve(t, "127.0.0.1:8081", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && r.URL.Path == "/" && !holdAccount {
			loc := []map[string]string{{"name": "local", "databaseAccountEndpoint": "http://" + r.Host + "/"}}
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(map[string]any{"writableLocations": loc, "readableLocations": loc,
				"userConsistencyPolicy": map[string]string{"defaultConsistencyLevel": "Session"}})
			return
		}
		c.mu.Lock()
		c.at = append(c.at, time.Now())
		c.mu.Unlock()
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})) + "/"
	return c
}

// arrivals returns when the held requests came.
func (c *heldCosmos) arrivals() []time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Time(nil), c.at...)
}

// inMemory is a network in memory for a test in a synctest bubble that runs
// the program; it drains when the test ends (pipetest.Network.Drain).
func inMemory(t *testing.T) *pipetest.Network {
	n := &pipetest.Network{}
	t.Cleanup(n.Drain)
	return n
}

// program is the whole program started by a test: its base URL, and a
// client that reaches it.
type program struct {
	url    string
	client *http.Client
}

// startProgram runs the whole program with the given settings on top of
// the defaults, on loopback, and returns it once it listens.
func startProgram(t *testing.T, settings map[string]string) program {
	t.Helper()
	port, err := loopback.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	// Listening is the event the test waits for, not a poll of the port.
	listening := make(chan struct{})
	setNetwork(t, func(network, addr string) (net.Listener, error) {
		ln, err := net.Listen(network, addr)
		if err == nil {
			close(listening)
		}
		return ln, err
	}, nil)
	r := runProgram(t, port, settings)
	select {
	case <-listening:
	case <-r.done:
		t.Fatalf("run ended before it listened: %v", r.err)
	}
	return program{url: "http://127.0.0.1:" + strconv.Itoa(port), client: &http.Client{Timeout: 20 * time.Second}}
}

// startProgramIn runs the whole program on n, inside a synctest bubble: it
// listens on n and reaches Cosmos DB through it, so that its clocks are
// the bubble's.
func startProgramIn(t *testing.T, n *pipetest.Network, settings map[string]string) program {
	t.Helper()
	setNetwork(t, n.Listen, n.Transport())
	r := runProgram(t, 7000, settings)
	synctest.Wait() // it listens, or has returned
	select {
	case <-r.done:
		t.Fatalf("run ended before it listened: %v", r.err)
	default:
	}
	return program{url: "http://127.0.0.1:7000", client: n.Client()}
}

// setNetwork sets run's network for the test.
func setNetwork(t *testing.T, l func(network, addr string) (net.Listener, error), cosmos http.RoundTripper) {
	listen, cosmosTransport = l, cosmos
	t.Cleanup(func() { listen, cosmosTransport = net.Listen, nil })
}

// running is a run of the program: done is closed when run returns err.
type running struct {
	done chan struct{}
	err  error
}

// runProgram runs the program with settings on port until the test ends.
func runProgram(t *testing.T, port int, settings map[string]string) *running {
	t.Helper()
	unsetConfig(t)
	t.Setenv("FUNCTIONS_CUSTOMHANDLER_PORT", strconv.Itoa(port))
	for k, v := range settings {
		t.Setenv(k, v)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{done: make(chan struct{})}
	go func() {
		defer close(r.done)
		r.err = run(ctx, io.Discard)
	}()
	t.Cleanup(func() {
		cancel()
		if <-r.done; r.err != nil {
			t.Errorf("run: %v", r.err)
		}
	})
	return r
}

// invokeProcessOrder sends one order as the host does for ProcessOrder
// (binary trigger: base64 body, scalars JSON-encoded) and returns the status
// and the parking envelope's reason and deliveryCount, if any. Its deadline
// is far below the SDK's own 65 s per attempt: a handler that ignored
// COSMOS_OPERATION_TIMEOUT would still be waiting for the held request.
func invokeProcessOrder(t *testing.T, p program, deliveryCount int) (status int, reason string, parkedAt int) {
	t.Helper()
	body := `{"orderId":"ORD-SET-1","customerId":"CUST-42","currency":"EUR","lines":[{"sku":"SKU-1","quantity":1,"unitPrice":"5.00"}],"total":"5.00","placedAt":"2026-11-29T10:00:00Z"}`
	inv := fmt.Sprintf(`{"Data":{"message":%q},"Metadata":{"MessageId":"\"ORD-SET-1\"","DeliveryCount":"%d","EnqueuedTimeUtc":"2026-11-29T10:00:02"}}`,
		base64.StdEncoding.EncodeToString([]byte(body)), deliveryCount)
	req, _ := http.NewRequest(http.MethodPost, p.url+"/ProcessOrder", bytes.NewReader([]byte(inv)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Azure-Functions-InvocationId", fmt.Sprintf("inv-settings-%d", deliveryCount))
	resp, err := p.client.Do(req)
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
// configuration path that RETRY_BUDGET_DELIVERY_COUNT,
// COSMOS_OPERATION_TIMEOUT and MESSAGE_DEADLINE change what the handler
// does: against a Cosmos that holds every request, each delivery answers at
// MESSAGE_DEADLINE, its first attempt cut at the operation timeout and
// another sent before the deadline, and with a budget of 3 the third
// delivery parks instead of the default ninth. On virtual time, the program
// on a network in memory.
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
			synctest.Test(t, func(t *testing.T) {
				n := inMemory(t)
				const deadline, attempt = time.Second, 300 * time.Millisecond
				cosmos := holdingCosmos(t, n, tc.holdAccount)
				p := startProgramIn(t, n, map[string]string{
					"COSMOS_ENDPOINT":             cosmos.url,
					"COSMOS_KEY":                  "a2V5",
					"RETRY_BUDGET_DELIVERY_COUNT": "3",
					"COSMOS_OPERATION_TIMEOUT":    attempt.String(),
					"MESSAGE_DEADLINE":            deadline.String(),
				})
				begun := time.Now()
				for _, step := range []struct {
					delivery int
					status   int
					reason   string
				}{
					{1, http.StatusServiceUnavailable, ""},
					{2, http.StatusServiceUnavailable, ""},
					{3, http.StatusOK, "RetryBudgetExhausted"},
				} {
					start := time.Now()
					status, reason, parkedAt := invokeProcessOrder(t, p, step.delivery)
					if status != step.status || reason != step.reason || (reason != "" && parkedAt != step.delivery) {
						t.Errorf("delivery %d: status %d, parked %q at delivery %d; want %d, parked %q",
							step.delivery, status, reason, parkedAt, step.status, step.reason)
					}
					if took := time.Since(start); took != deadline {
						t.Errorf("delivery %d answered after %s, want at MESSAGE_DEADLINE %s", step.delivery, took, deadline)
					}
				}
				// An attempt left to run would hold delivery 1 to its deadline
				// with one request.
				var after []time.Duration // since delivery 1 began
				for _, at := range cosmos.arrivals() {
					after = append(after, at.Sub(begun))
				}
				if len(after) < 2 || after[0] != 0 || after[1] < attempt || after[1] >= deadline {
					t.Errorf("held requests came %v after delivery 1 began; want a second one after the %s operation timeout, within the delivery", after, attempt)
				}
			})
		})
	}
}

// TestSubmitDeadlineReachesTheRunningHandler shows through the program's own
// wiring that SubmitOrder is served (the key container, the service) and
// that SUBMIT_DEADLINE bounds it: against a Cosmos that holds every request,
// the caller gets 503 with Retry-After at the deadline, far inside the SDK's
// own 65 s per attempt. On virtual time.
func TestSubmitDeadlineReachesTheRunningHandler(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := inMemory(t)
		const deadline = 500 * time.Millisecond
		p := startProgramIn(t, n, map[string]string{
			"COSMOS_ENDPOINT": holdingCosmos(t, n, false).url,
			"COSMOS_KEY":      "a2V5",
			"SUBMIT_DEADLINE": deadline.String(),
		})
		body := `{"orderId":"ORD-SET-2","customerId":"CUST-42","currency":"EUR","lines":[{"sku":"SKU-1","quantity":1,"unitPrice":"5.00"}],"total":"5.00","placedAt":"2026-11-29T10:00:00Z"}`
		req := map[string]any{"Url": "http://127.0.0.1:7071/api/orders", "Method": "POST", "Query": map[string]string{},
			"Headers": map[string][]string{"Idempotency-Key": {"k-1"}, "Content-Type": {"application/json"}, "Content-Length": {fmt.Sprint(len(body))}}, "Body": body}
		inv, _ := json.Marshal(map[string]any{"Data": map[string]any{"req": req}, "Metadata": map[string]any{}})
		start := time.Now()
		resp, err := p.client.Post(p.url+"/SubmitOrder", "application/json", bytes.NewReader(inv))
		if err != nil {
			t.Fatalf("SubmitOrder: %v", err)
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
		if took != deadline {
			t.Errorf("answered after %s, want at SUBMIT_DEADLINE %s", took, deadline)
		}
	})
}
