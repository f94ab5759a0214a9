package handler

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ordersink/orders-consumer/cosmos"
	"github.com/ordersink/orders-consumer/orders"
	"github.com/ordersink/orders-consumer/orders/orderstest"
)

// fakeCosmos answers the account read, then fails every document request the
// way a test case asks, and remembers every Authorization header it saw.
type fakeCosmos struct {
	srv    *httptest.Server
	fail   func(w http.ResponseWriter, r *http.Request)
	mu     sync.Mutex
	tokens []string
}

func newFakeCosmos(t *testing.T, failAccount bool, fail func(w http.ResponseWriter, r *http.Request)) *fakeCosmos {
	f := &fakeCosmos{fail: fail}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.tokens = append(f.tokens, r.Header.Get("Authorization"))
		f.mu.Unlock()
		if r.URL.Path == "/" && !failAccount {
			loc := []map[string]string{{"name": "local", "databaseAccountEndpoint": f.srv.URL + "/"}}
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(map[string]any{"id": "fake", "writableLocations": loc, "readableLocations": loc,
				"userConsistencyPolicy": map[string]string{"defaultConsistencyLevel": "Session"}})
			return
		}
		f.fail(w, r)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

// secrets returns every Authorization value the server saw, raw and
// URL-decoded, with the signature part on its own.
func (f *fakeCosmos) secrets() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, tok := range f.tokens {
		if tok == "" {
			continue
		}
		out = append(out, tok)
		if dec, err := url.QueryUnescape(tok); err == nil {
			out = append(out, dec)
			if _, sig, ok := strings.Cut(dec, "sig="); ok && sig != "" {
				out = append(out, sig)
			}
		}
	}
	return out
}

// cosmosError answers like Cosmos DB does: a JSON body with code and message.
// The 401 message quotes the payload the server signed, as Cosmos does.
func cosmosError(status int) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, r *http.Request) {
		msg := "Request failed"
		if status == http.StatusUnauthorized {
			msg = fmt.Sprintf("The input authorization token can't serve the request. Server used the following payload to sign: '%s\\n%s\\n\\n%s\\n\\n'",
				strings.ToLower(r.Method), r.URL.Path, strings.ToLower(r.Header.Get("x-ms-date")))
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("x-ms-activity-id", "00000000-0000-0000-0000-000000000000")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(map[string]string{"code": http.StatusText(status), "message": msg})
	}
}

// dropConnection closes the connection without an answer.
func dropConnection(w http.ResponseWriter, _ *http.Request) {
	conn, _, err := w.(http.Hijacker).Hijack()
	if err == nil {
		conn.Close()
	}
}

// TestFailingCosmosCallsNeverShowTheKey: whatever a failing Cosmos call
// leaves in the log line, the host's Logs and the parking envelope, neither
// the account key nor any Authorization header sent with the key appears.
func TestFailingCosmosCallsNeverShowTheKey(t *testing.T) {
	raw := make([]byte, 64)
	_, _ = rand.Read(raw)
	key := base64.StdEncoding.EncodeToString(raw)

	tests := []struct {
		name        string
		failAccount bool
		fail        func(http.ResponseWriter, *http.Request)
	}{
		{"401 on the account read", true, cosmosError(http.StatusUnauthorized)},
		{"401 on the write", false, cosmosError(http.StatusUnauthorized)},
		{"403 on the write", false, cosmosError(http.StatusForbidden)},
		{"400 on the write (parked at once)", false, cosmosError(http.StatusBadRequest)},
		{"500 on the write", false, cosmosError(http.StatusInternalServerError)},
		{"connection dropped", false, dropConnection},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fake := newFakeCosmos(t, tc.failAccount, tc.fail)
			store, err := cosmos.Open(cosmos.Options{Endpoint: fake.srv.URL + "/", Key: key}, "shop", "orders")
			if err != nil {
				t.Fatal(err)
			}
			var logs orderstest.Buffer
			srv := NewServer(Config{
				Processor:       &orders.Processor{Store: store},
				Logger:          slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
				MessageDeadline: 5 * time.Second,
			})
			var seen bytes.Buffer
			// Delivery 1 is retried (the error goes to Logs); delivery 9 is
			// the last attempt (the error goes into the parking envelope).
			for _, delivery := range []int{1, 9} {
				rec := httptest.NewRecorder()
				srv.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/"+FunctionProcessOrder,
					bytes.NewReader(hostInvocation([]byte(orderstest.ExampleBody), "ORD-2026-000123", delivery))))
				if rec.Code == http.StatusOK && !strings.Contains(rec.Body.String(), `"parking"`) {
					t.Fatalf("delivery %d: %d without parking: %s", delivery, rec.Code, rec.Body.String())
				}
				seen.Write(rec.Body.Bytes())
			}
			seen.WriteString(logs.String())
			if !strings.Contains(seen.String(), "ORD-2026-000123") {
				t.Fatalf("nothing about the order was logged: %s", seen.String())
			}
			secrets := append(fake.secrets(), key, base64.RawStdEncoding.EncodeToString(raw), base64.URLEncoding.EncodeToString(raw))
			if len(secrets) < 4 {
				t.Fatalf("the fake saw no Authorization header")
			}
			for _, s := range secrets {
				if strings.Contains(seen.String(), s) {
					t.Errorf("a secret (%.12s…) appears in what the handler wrote:\n%s", s, seen.String())
				}
			}
			for _, marker := range []string{"type=master", "type%3Dmaster", "Authorization"} {
				if strings.Contains(seen.String(), marker) {
					t.Errorf("%q appears in what the handler wrote:\n%s", marker, seen.String())
				}
			}
		})
	}
}
