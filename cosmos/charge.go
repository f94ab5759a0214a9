package cosmos

import (
	"net/http"
	"strconv"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"

	"github.com/ordersink/orders-consumer/internal/requestcharge"
)

// chargePolicy reports each response's request charge to the request's
// context (requestcharge.Add). It runs per attempt, so the SDK's own
// retries of a 429 are counted, and it sees failed responses, whose charge
// the SDK's error values do not carry.
type chargePolicy struct{}

func (chargePolicy) Do(req *policy.Request) (*http.Response, error) {
	resp, err := req.Next()
	if resp != nil {
		if v, perr := strconv.ParseFloat(resp.Header.Get("x-ms-request-charge"), 64); perr == nil {
			requestcharge.Add(req.Raw().Context(), v)
		}
	}
	return resp, err
}
