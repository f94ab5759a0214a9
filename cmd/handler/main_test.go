package main

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ordersink/orders-consumer/internal/loopback"
)

func TestLoadConfigNamesTheBadSetting(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want string
	}{
		{"endpoint missing", map[string]string{"COSMOS_ENDPOINT": ""}, "COSMOS_ENDPOINT"},
		{"plain http off the machine", map[string]string{"COSMOS_ENDPOINT": "http://acct.documents.azure.com/"}, "not loopback"},
		{"not a URL", map[string]string{"COSMOS_ENDPOINT": "acct"}, "COSMOS_ENDPOINT"},
		{"budget not a number", map[string]string{"RETRY_BUDGET_DELIVERY_COUNT": "many"}, "RETRY_BUDGET_DELIVERY_COUNT"},
		{"budget zero", map[string]string{"RETRY_BUDGET_DELIVERY_COUNT": "0"}, "RETRY_BUDGET_DELIVERY_COUNT"},
		{"timeout not a duration", map[string]string{"COSMOS_OPERATION_TIMEOUT": "soon"}, "COSMOS_OPERATION_TIMEOUT"},
		{"request limit tiny", map[string]string{"MAX_REQUEST_BYTES": "10"}, "MAX_REQUEST_BYTES"},
		{"batch parallelism zero", map[string]string{"BATCH_PARALLELISM": "0"}, "BATCH_PARALLELISM"},
		{"batch limit below message limit", map[string]string{"MAX_BATCH_REQUEST_BYTES": "65536"}, "MAX_BATCH_REQUEST_BYTES"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			unsetConfig(t)
			t.Setenv("COSMOS_ENDPOINT", "https://acct.documents.azure.com:443/")
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			_, err := loadConfig()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one naming %s", err, tc.want)
			}
		})
	}
}

// unsetConfig clears every setting for the test, so defaults apply even
// when the test runs under scripts/test.sh, which exports emulator settings.
func unsetConfig(t *testing.T) {
	for _, k := range []string{"FUNCTIONS_CUSTOMHANDLER_PORT", "COSMOS_ENDPOINT", "COSMOS_KEY", "COSMOS_DATABASE", "COSMOS_CONTAINER",
		"RETRY_BUDGET_DELIVERY_COUNT", "MAX_REQUEST_BYTES", "MAX_BATCH_REQUEST_BYTES", "BATCH_PARALLELISM", "COSMOS_OPERATION_TIMEOUT", "COSMOS_MAX_CONNS", "LOG_LEVEL"} {
		t.Setenv(k, "") // restores the old value after the test
		os.Unsetenv(k)
	}
}

func TestLoadConfigDefaults(t *testing.T) {
	unsetConfig(t)
	t.Setenv("COSMOS_ENDPOINT", "http://127.0.0.1:8081/")
	c, err := loadConfig()
	if err != nil {
		t.Fatal(err)
	}
	if c.CosmosDatabase != "shop" || c.CosmosContainer != "orders" || c.RetryBudget != 9 || c.CosmosKey != "" {
		t.Errorf("defaults = %+v", c)
	}
}

// TestRunServesAndStops starts the whole program in process: it must answer
// the host's readiness probe without touching Cosmos, and stop cleanly.
func TestRunServesAndStops(t *testing.T) {
	unsetConfig(t)
	port, err := loopback.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("FUNCTIONS_CUSTOMHANDLER_PORT", strconv.Itoa(port))
	t.Setenv("COSMOS_ENDPOINT", "http://127.0.0.1:1/") // never dialled by GET /
	t.Setenv("COSMOS_KEY", "a2V5")

	ctx, cancel := context.WithCancel(context.Background())
	var out lockedBuffer
	done := make(chan error, 1)
	go func() { done <- run(ctx, &out) }()

	url := "http://127.0.0.1:" + strconv.Itoa(port) + "/"
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("GET / = %d", resp.StatusCode)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no answer on %s: %v", url, err)
		}
		time.Sleep(25 * time.Millisecond) // the host polls every 25 ms too
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("run: %v", err)
	}
	if s := out.String(); !strings.Contains(s, `"msg":"listening"`) || strings.Contains(s, "a2V5") {
		t.Errorf("startup log = %s (must say listening and never show the key)", s)
	}
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
