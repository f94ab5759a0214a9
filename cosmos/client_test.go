package cosmos

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"

	"github.com/ordersink/orders-consumer/orders"
)

func TestCheckEndpoint(t *testing.T) {
	tests := []struct {
		endpoint string
		ok       bool
	}{
		{"https://acct.documents.azure.com:443/", true},
		{"https://localhost:8081/", true},
		{"http://127.0.0.1:8081/", true},
		{"http://localhost:8081/", true},
		{"http://[::1]:8081/", true},
		{"http://127.1.2.3:8081/", true},
		{"http://acct.documents.azure.com/", false},
		{"http://10.0.0.5:8081/", false},
		{"http://localhost.example.com/", false},
		{"ftp://127.0.0.1/", false},
		{"acct.documents.azure.com", false},
		{"", false},
	}
	for _, tc := range tests {
		err := CheckEndpoint(tc.endpoint)
		if (err == nil) != tc.ok {
			t.Errorf("CheckEndpoint(%q) = %v, want ok=%v", tc.endpoint, err, tc.ok)
		}
		if err != nil && !strings.Contains(err.Error(), "COSMOS_ENDPOINT") {
			t.Errorf("error %q does not name the setting", err)
		}
	}
}

func TestNewClientRefusesPlainHTTPOffTheMachine(t *testing.T) {
	if _, err := NewClient(Options{Endpoint: "http://acct.documents.azure.com/", Key: "a2V5"}); err == nil {
		t.Fatal("NewClient accepted http:// to a remote host")
	}
}

// TestClassify: one reading of a Cosmos error serves both stores. Each
// answer (or none) gives the order store's error and the key store's the
// same answer, status and sub-status, and orders.IsTransient reads the
// answer from either: throttling, timeouts, outages and refused
// credentials (an operator fixes those) may pass; a request Cosmos refuses
// as such (400, 413) will be refused again.
func TestClassify(t *testing.T) {
	answer := func(status int, header http.Header) error {
		return &azcore.ResponseError{StatusCode: status, RawResponse: &http.Response{StatusCode: status, Header: header}}
	}
	for name, tc := range map[string]struct {
		err               error
		status, subStatus int
		transient         bool
	}{
		"no answer":             {context.DeadlineExceeded, 0, 0, true},
		"refused connection":    {errors.New("dial tcp: connection refused"), 0, 0, true},
		"400":                   {answer(400, nil), 400, 0, false},
		"401":                   {answer(401, nil), 401, 0, true},
		"403 role not granted":  {answer(403, http.Header{"X-Ms-Substatus": {"5301"}}), 403, 5301, true},
		"403 without a message": {&azcore.ResponseError{StatusCode: 403}, 403, 0, true},
		"408":                   {answer(408, nil), 408, 0, true},
		"413":                   {answer(413, nil), 413, 0, false},
		"429":                   {answer(429, http.Header{"X-Ms-Substatus": {"3200"}}), 429, 3200, true},
		"449":                   {answer(449, nil), 449, 0, true},
		"500":                   {answer(500, nil), 500, 0, true},
		"503":                   {answer(503, nil), 503, 0, true},
	} {
		for _, err := range []error{classify("create order", "ORD-1", tc.err), classifyKey("claim idempotency key", "k1", tc.err)} {
			var f interface {
				Transient() bool
				StoreStatus() (int, int)
			}
			if !errors.As(err, &f) {
				t.Fatalf("%s: %T answers neither Transient nor StoreStatus", name, err)
			}
			status, sub := f.StoreStatus()
			if f.Transient() != tc.transient || orders.IsTransient(err) != tc.transient || status != tc.status || sub != tc.subStatus {
				t.Errorf("%s: %T transient %v (IsTransient %v), status %d/%d; want %v, %d/%d",
					name, err, f.Transient(), orders.IsTransient(err), status, sub, tc.transient, tc.status, tc.subStatus)
			}
			if !errors.Is(err, tc.err) {
				t.Errorf("%s: %v does not wrap the Cosmos error", name, err)
			}
		}
	}
}

func TestConciseKeepsOneLineAndTheCause(t *testing.T) {
	resp := &http.Response{StatusCode: 429, Header: http.Header{"X-Ms-Activity-Id": {"a1"}},
		Body:    io.NopCloser(strings.NewReader(`{"code":"TooManyRequests","message":"Message: {\"Errors\":[\"Request rate is large\"]}\r\nActivityId: a1, Request URI: /apps/x"}`)),
		Request: httptest.NewRequest(http.MethodPost, "http://127.0.0.1:8081/dbs/shop/colls/orders/docs", nil)}
	sdkErr := runtime.NewResponseError(resp)
	err := classify("create order", "ORD-1", sdkErr)
	msg := err.Error()
	if strings.Contains(msg, "\n") || !strings.Contains(msg, "create order ORD-1: 429 Too Many Requests: TooManyRequests") || !strings.Contains(msg, "activity a1") {
		t.Errorf("error text = %q", msg)
	}
	var re *azcore.ResponseError
	if !errors.As(err, &re) || re.StatusCode != 429 {
		t.Errorf("the SDK error is not reachable with errors.As: %v", err)
	}
}

// TestTransportPoolsAsManyConnectionsAsAsked: the transport NewClient
// builds, which the bench wraps, keeps MaxConnsPerHost idle connections per
// host (100 when unset) instead of net/http's 2.
func TestTransportPoolsAsManyConnectionsAsAsked(t *testing.T) {
	for _, c := range []struct{ conns, want int }{{0, 100}, {-1, 100}, {16, 16}} {
		tr, ok := transport(Options{MaxConnsPerHost: c.conns}).(*http.Transport)
		if !ok {
			t.Fatalf("transport(MaxConnsPerHost %d) is not an *http.Transport", c.conns)
		}
		if tr.MaxIdleConnsPerHost != c.want || tr.MaxIdleConns != 2*c.want {
			t.Errorf("MaxConnsPerHost %d: idle per host %d, all %d; want %d, %d", c.conns, tr.MaxIdleConnsPerHost, tr.MaxIdleConns, c.want, 2*c.want)
		}
	}
}
