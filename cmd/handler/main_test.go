package main

import (
	"context"
	"encoding/base64"
	"net/http"
	"os"
	"reflect"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ordersink/orders-consumer/cosmos"
	"github.com/ordersink/orders-consumer/orders/orderstest"
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
		{"batch parallelism above the pool", map[string]string{"BATCH_PARALLELISM": "101"}, "must not exceed COSMOS_MAX_CONNS (100)"},
		{"pool below the default batch parallelism", map[string]string{"COSMOS_MAX_CONNS": "16"}, "BATCH_PARALLELISM (100) must not exceed COSMOS_MAX_CONNS (16)"},
		{"pool zero", map[string]string{"COSMOS_MAX_CONNS": "0"}, "COSMOS_MAX_CONNS must be at least 1"},
		{"batch limit below message limit", map[string]string{"MAX_BATCH_REQUEST_BYTES": "65536"}, "MAX_BATCH_REQUEST_BYTES"},
		{"message deadline past functionTimeout", map[string]string{"MESSAGE_DEADLINE": "4m40s"}, "MESSAGE_DEADLINE 4m40s exceeds the host's functionTimeout 5m0s"},
		{"message deadline past a shorter host.json clock", map[string]string{"HOST_JSON": "testdata/host-2m.json"}, "MESSAGE_DEADLINE 4m0s exceeds the host's maxAutoLockRenewalDuration 2m0s"},
		{"batch deadline past the lock", map[string]string{"BATCH_DEADLINE": "1m"}, "BATCH_DEADLINE 1m0s exceeds the host's the queue's lock duration"},
		{"batch deadline past a configured lock", map[string]string{"QUEUE_LOCK_DURATION": "30s"}, "BATCH_DEADLINE 40s exceeds"},
		{"attempt longer than the batch", map[string]string{"COSMOS_OPERATION_TIMEOUT": "45s"}, "COSMOS_OPERATION_TIMEOUT 45s exceeds"},
		{"submit deadline past functionTimeout", map[string]string{"SUBMIT_DEADLINE": "4m40s"}, "SUBMIT_DEADLINE 4m40s exceeds the host's functionTimeout 5m0s"},
		{"submit deadline past the key lease", map[string]string{"SUBMIT_DEADLINE": "30s", "IDEMPOTENCY_LEASE": "30s"}, "SUBMIT_DEADLINE 30s plus the 5s that finish its key exceed IDEMPOTENCY_LEASE 30s"},
		{"submit deadline and key finish past the key lease", map[string]string{"SUBMIT_DEADLINE": "23s", "IDEMPOTENCY_LEASE": "30s"}, "SUBMIT_DEADLINE 23s plus the 5s that finish its key exceed IDEMPOTENCY_LEASE 30s: together they may take at most 27s"},
		{"submit deadline zero", map[string]string{"SUBMIT_DEADLINE": "0s"}, "SUBMIT_DEADLINE must be positive"},
		{"probe interval zero", map[string]string{"COSMOS_PROBE_INTERVAL": "0s"}, "COSMOS_PROBE_INTERVAL"},
		{"host.json unreadable", map[string]string{"HOST_JSON": "testdata/host-bad.json"}, "functionTimeout"},
		{"key lease zero", map[string]string{"IDEMPOTENCY_LEASE": "0s"}, "IDEMPOTENCY_LEASE must be positive"},
		{"key lease not a duration", map[string]string{"IDEMPOTENCY_LEASE": "a minute"}, "IDEMPOTENCY_LEASE"},
		{"key TTL below the lease", map[string]string{"IDEMPOTENCY_KEY_TTL": "30s"}, "IDEMPOTENCY_KEY_TTL (30s) must be at least IDEMPOTENCY_LEASE (1m0s)"},
		{"key TTL past Cosmos DB's ttl", map[string]string{"IDEMPOTENCY_KEY_TTL": "600000h"}, "IDEMPOTENCY_KEY_TTL 600000h0m0s exceeds"},
		{"key container empty", map[string]string{"IDEMPOTENCY_CONTAINER": ""}, "IDEMPOTENCY_CONTAINER must not be empty"},
		{"log level misspelt", map[string]string{"LOG_LEVEL": "eror"}, "LOG_LEVEL"},
		{"message limit tiny", map[string]string{"SERVICEBUS_MAX_MESSAGE_BYTES": "1000"}, "SERVICEBUS_MAX_MESSAGE_BYTES"},
		{"Premium messages, request limit left at its default", map[string]string{"SERVICEBUS_MAX_MESSAGE_BYTES": "10485760"}, "MAX_REQUEST_BYTES"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := loadConfigWith(t, tc.env)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one naming %s", err, tc.want)
			}
		})
	}
}

// loadConfigWith loads the configuration of the settings in env over the
// defaults, with an Azure endpoint unless env gives one.
func loadConfigWith(t *testing.T, env map[string]string) (config, error) {
	t.Helper()
	unsetConfig(t)
	t.Setenv("COSMOS_ENDPOINT", "https://acct.documents.azure.com:443/")
	for k, v := range env {
		t.Setenv(k, v)
	}
	return loadConfig()
}

// unsetConfig clears every setting for the test, so defaults apply even
// when the test runs under scripts/test.sh, which exports emulator settings.
func unsetConfig(t *testing.T) {
	for _, k := range []string{"FUNCTIONS_CUSTOMHANDLER_PORT", "COSMOS_ENDPOINT", "COSMOS_KEY", "COSMOS_DATABASE", "COSMOS_CONTAINER",
		"RETRY_BUDGET_DELIVERY_COUNT", "MAX_REQUEST_BYTES", "SERVICEBUS_MAX_MESSAGE_BYTES", "MAX_BATCH_REQUEST_BYTES", "BATCH_PARALLELISM", "COSMOS_OPERATION_TIMEOUT", "COSMOS_MAX_CONNS", "LOG_LEVEL",
		"MESSAGE_DEADLINE", "BATCH_DEADLINE", "COSMOS_PROBE_INTERVAL", "AUTH_ALARM_AFTER", "HOST_JSON", "HOST_FUNCTION_TIMEOUT",
		"HOST_MAX_AUTO_LOCK_RENEWAL", "QUEUE_LOCK_DURATION", "IDEMPOTENCY_CONTAINER", "IDEMPOTENCY_KEY_TTL", "IDEMPOTENCY_LEASE", "SUBMIT_DEADLINE", "WEBSITE_AUTH_ENABLED"} {
		t.Setenv(k, "") // restores the old value after the test
		os.Unsetenv(k)
	}
}

// TestLoadConfigDefaults: with no setting given, the configuration is
// DefaultConfig's, the host clocks filled from host.json's defaults.
func TestLoadConfigDefaults(t *testing.T) {
	unsetConfig(t)
	t.Setenv("COSMOS_ENDPOINT", "http://127.0.0.1:8081/")
	c, err := loadConfig()
	if err != nil {
		t.Fatal(err)
	}
	want := DefaultConfig()
	want.CosmosEndpoint = "http://127.0.0.1:8081/"
	want.Host.FunctionTimeout, want.Host.LockRenewal = defaultFunctionTimeout, defaultLockRenewal
	if c != want {
		t.Errorf("loaded %+v\nwant    %+v", c, want)
	}
	if c.CosmosDatabase != "shop" || c.CosmosContainer != "orders" || c.RetryBudget != 9 || c.CosmosKey != "" || c.MaxMessageBytes != 262144 ||
		c.BatchParallelism != 100 || c.MaxConns != 100 {
		t.Errorf("defaults = %+v", c)
	}
	if c.KeyContainer != "idempotency-keys" || c.KeyTTL != 24*time.Hour || c.KeyLease != time.Minute {
		t.Errorf("idempotency defaults: container %q, TTL %s, lease %s", c.KeyContainer, c.KeyTTL, c.KeyLease)
	}
	// The bar: an outage of 30 minutes parks no valid order.
	if c.tolerated() < 30*time.Minute {
		t.Errorf("defaults tolerate an outage of %s, want at least 30m", c.tolerated())
	}
}

// TestDefaultsHaveOneHome: DefaultConfig states every default; an
// envconfig `default:"…"` tag would be a second home, which nothing keeps in
// step with the first.
func TestDefaultsHaveOneHome(t *testing.T) {
	var walk func(reflect.Type, string)
	walk = func(typ reflect.Type, path string) {
		for i := range typ.NumField() {
			f := typ.Field(i)
			if d, ok := f.Tag.Lookup("default"); ok {
				t.Errorf("%s%s has the default tag %q: state its default in DefaultConfig only", path, f.Name, d)
			}
			if f.Type.Kind() == reflect.Struct && f.Tag.Get("envconfig") == "" {
				walk(f.Type, path+f.Name+".")
			}
		}
	}
	walk(reflect.TypeFor[config](), "config.")
}

// The deployed host.json is the one the defaults must fit.
func TestLoadConfigReadsTheAppsHostJSON(t *testing.T) {
	unsetConfig(t)
	t.Setenv("COSMOS_ENDPOINT", "http://127.0.0.1:8081/")
	t.Setenv("HOST_JSON", "../../host.json")
	c, err := loadConfig()
	if err != nil {
		t.Fatal(err)
	}
	if c.Host.FunctionTimeout != 5*time.Minute || c.Host.LockRenewal != 5*time.Minute || c.Host.LockDuration != time.Minute {
		t.Errorf("host clocks = %+v", c.Host)
	}
}

// TestRunServesAndStops starts the whole program in process: it must answer
// the host's readiness probe at once without touching Cosmos, and stop
// cleanly and at once, even with an invocation held by an unreachable
// Cosmos DB: the held invocation ends with the signal, not with the 20 s
// shutdown grace. On virtual time, on a network in memory where nothing
// listens at Cosmos DB's address.
func TestRunServesAndStops(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := inMemory(t)
		setNetwork(t, n.Listen, n.Transport())
		unsetConfig(t)
		t.Setenv("FUNCTIONS_CUSTOMHANDLER_PORT", "7000")
		t.Setenv("COSMOS_ENDPOINT", "http://127.0.0.1:1/") // never dialled by GET /
		t.Setenv("COSMOS_KEY", "a2V5")

		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var out orderstest.Buffer
		done := make(chan error, 1)
		go func() { done <- run(ctx, &out) }()
		synctest.Wait() // it listens

		client := n.Client()
		url := "http://127.0.0.1:7000/"
		start := time.Now()
		resp, err := client.Get(url)
		if err != nil {
			t.Fatalf("GET /: %v", err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || time.Since(start) != 0 {
			t.Fatalf("GET / = %d after %s, want 200 at once", resp.StatusCode, time.Since(start))
		}
		held := make(chan int, 1)
		var answeredAt time.Time
		go func() {
			order := `{"orderId":"ORD-1","customerId":"C","currency":"EUR","lines":[{"sku":"S","quantity":1,"unitPrice":"1.00"}],"total":"1.00","placedAt":"2026-11-29T10:00:00Z"}`
			inv := `{"Data":{"message":"` + base64.StdEncoding.EncodeToString([]byte(order)) + `"},"Metadata":{"DeliveryCount":"1","MessageId":"\"ORD-1\""}}`
			resp, err := client.Post(url+"ProcessOrder", "application/json", strings.NewReader(inv))
			if err != nil {
				held <- 0
				return
			}
			resp.Body.Close()
			answeredAt = time.Now()
			held <- resp.StatusCode
		}()
		time.Sleep(time.Minute) // the invocation is held: nothing listens at 127.0.0.1:1
		stopped := time.Now()
		cancel()
		if err := <-done; err != nil {
			t.Fatalf("run: %v", err)
		}
		if took := time.Since(stopped); took >= time.Second {
			t.Errorf("stopped %s after the signal, with an invocation held", took)
		}
		if status := <-held; status != http.StatusServiceUnavailable || answeredAt.Before(stopped) {
			t.Errorf("held invocation: status %d at %s, want 503 after the signal (%s)", status, answeredAt, stopped)
		}
		if s := out.String(); !strings.Contains(s, `"msg":"listening"`) || strings.Contains(s, "a2V5") {
			t.Errorf("startup log = %s (must say listening and never show the key)", s)
		}
	})
}

// TestKeyServiceFollowsSettings: the executeOnce service main builds has
// the configured lease and TTL, over a Cosmos key store.
func TestKeyServiceFollowsSettings(t *testing.T) {
	unsetConfig(t)
	t.Setenv("COSMOS_ENDPOINT", "http://127.0.0.1:8081/")
	t.Setenv("COSMOS_KEY", "a2V5")
	t.Setenv("IDEMPOTENCY_LEASE", "20s")
	t.Setenv("IDEMPOTENCY_KEY_TTL", "1h")
	t.Setenv("SUBMIT_DEADLINE", "12s") // with the 5 s to finish its key, below 90 % of the lease
	c, err := loadConfig()
	if err != nil {
		t.Fatal(err)
	}
	store, err := cosmos.Open(cosmos.Options{Endpoint: c.CosmosEndpoint, Key: c.CosmosKey}, c.CosmosDatabase, c.CosmosContainer)
	if err != nil {
		t.Fatal(err)
	}
	svc, err := c.keyService(store)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := svc.Store.(*cosmos.KeyStore); !ok || svc.Lease != 20*time.Second || svc.TTL != time.Hour {
		t.Errorf("service %+v, want a cosmos.KeyStore, lease 20s, TTL 1h", svc)
	}
}

// WEBSITE_AUTH_ENABLED, which the platform sets when App Service
// Authentication runs in front, is what lets SubmitOrder trust the principal
// header.
func TestLoadConfigReadsEasyAuth(t *testing.T) {
	for _, tc := range []struct {
		value string
		want  bool
	}{{"", false}, {"True", true}, {"false", false}} {
		unsetConfig(t)
		t.Setenv("COSMOS_ENDPOINT", "http://127.0.0.1:8081/")
		if tc.value != "" {
			t.Setenv("WEBSITE_AUTH_ENABLED", tc.value)
		}
		c, err := loadConfig()
		if err != nil || c.EasyAuth != tc.want {
			t.Errorf("WEBSITE_AUTH_ENABLED=%q: EasyAuth %v, %v; want %v", tc.value, c.EasyAuth, err, tc.want)
		}
	}
}
