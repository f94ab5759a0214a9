package cosmos

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
)

// The one-line description of a Cosmos error keeps whichever of code and
// message Cosmos sent, and is cut only past 300 characters.
func TestConciseDescribesWhatCosmosSent(t *testing.T) {
	long := strings.Repeat("m", 300-len("503 Service Unavailable: S: "))
	tests := []struct {
		name, body, want string
	}{
		{"code and message", `{"code":"TooManyRequests","message":"rate is large"}`, "429 Too Many Requests: TooManyRequests: rate is large"},
		{"code only", `{"code":"TooManyRequests"}`, "429 Too Many Requests: TooManyRequests"},
		{"message only", `{"message":"rate is large"}`, "429 Too Many Requests: rate is large"},
		{"neither", `{}`, "429 Too Many Requests"},
		{"not JSON", `<html>`, "429 Too Many Requests"},
		{"exactly 300 characters", `{"code":"S","message":"` + long + `"}`, "503 Service Unavailable: S: " + long},
		{"301 characters", `{"code":"S","message":"` + long + `x"}`, "503 Service Unavailable: S: " + long + "…"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			status := 429
			if strings.HasPrefix(tc.want, "503") {
				status = 503
			}
			resp := &http.Response{StatusCode: status, Header: http.Header{}, Body: io.NopCloser(strings.NewReader(tc.body)),
				Request: httptest.NewRequest(http.MethodPost, "http://127.0.0.1:8081/dbs/shop/colls/orders/docs", nil)}
			if got := concise(runtime.NewResponseError(resp)).Error(); got != tc.want {
				t.Errorf("concise = %q\nwant       %q", got, tc.want)
			}
		})
	}
}
