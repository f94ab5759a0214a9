package cosmos

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
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

func TestIsTransient(t *testing.T) {
	for status, want := range map[int]bool{0: true, 408: true, 429: true, 449: true, 500: true, 503: true, 401: true, 403: true, 400: false, 413: false} {
		if got := isTransient(status); got != want {
			t.Errorf("isTransient(%d) = %v, want %v", status, got, want)
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
