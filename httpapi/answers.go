package httpapi

import (
	"encoding/json"
	"net/http"

	"github.com/ordersink/orders-consumer/idempotency"
)

// ProblemTypeBase prefixes every problem type URI: the anchors are the
// sections of docs/http-api.md that say what each problem means and what the
// client should do.
const ProblemTypeBase = "https://github.com/ordersink/orders-consumer/blob/main/docs/http-api.md#"

// problemType is one kind of refusal of the HTTP API.
type problemType struct {
	anchor string
	title  string
	status int
}

// The problem types of docs/http-api.md; the anchors are part of the contract.
var (
	problemKeyMissing      = problemType{"idempotency-key-missing", "Idempotency-Key header required", http.StatusBadRequest}
	problemKeyMalformed    = problemType{"idempotency-key-malformed", "Idempotency-Key header malformed", http.StatusBadRequest}
	problemBodyMissing     = problemType{"body-missing", "Request body required", http.StatusBadRequest}
	problemLengthRequired  = problemType{"length-required", "Content-Length required", http.StatusLengthRequired}
	problemMalformed       = problemType{"malformed-order", "Request body is not an order document", http.StatusBadRequest}
	problemInvalid         = problemType{"invalid-order", "Order breaks a rule", http.StatusUnprocessableEntity}
	problemTooLarge        = problemType{"order-too-large", "Order too large", http.StatusRequestEntityTooLarge}
	problemKeyReused       = problemType{"idempotency-key-reused", "Idempotency-Key reused with another payload", http.StatusUnprocessableEntity}
	problemInFlight        = problemType{"request-in-progress", "A request with this Idempotency-Key is in progress", http.StatusConflict}
	problemOrderIDTaken    = problemType{"order-id-taken", "orderId already taken", http.StatusConflict}
	problemUnavailable     = problemType{"service-unavailable", "Service temporarily unavailable", http.StatusServiceUnavailable}
	problemNotFound        = problemType{"order-not-found", "Order not found", http.StatusNotFound}
	problemRequestTooLarge = problemType{"request-too-large", "Request too large", http.StatusRequestEntityTooLarge}
	problemSharedKey       = problemType{"shared-function-key", "Function key not assigned to one client", http.StatusForbidden}
	problemInternal        = problemType{"internal-error", "Internal error", http.StatusInternalServerError}
)

// problem is an RFC 9457 problem details object. Detail speaks to the
// client: it says what was wrong with the request, never how the service
// failed (error texts of the store stay in the log).
type problem struct {
	Type     string `json:"type"`
	Title    string `json:"title"`
	Status   int    `json:"status"`
	Detail   string `json:"detail"`
	Instance string `json:"instance,omitempty"`
	// Field names the member of the order that broke a rule (invalid-order).
	Field string `json:"field,omitempty"`
	// StoredHash and RequestHash are the fingerprints of the stored order
	// and of the request (order-id-taken), given to the order's owner only.
	StoredHash  string `json:"storedHash,omitempty"`
	RequestHash string `json:"requestHash,omitempty"`
	// InvocationID lets support find the request in the logs.
	InvocationID string `json:"invocationId,omitempty"`
}

// answer renders the problem as the caller's answer; headers are added to
// it (Retry-After).
func (p *problem) answer(headers ...[2]string) idempotency.Response {
	b, _ := json.Marshal(p) // strings and ints only: it cannot fail
	h := map[string]string{"Content-Type": "application/problem+json"}
	for _, kv := range headers {
		h[kv[0]] = kv[1]
	}
	return idempotency.Response{Status: p.Status, Headers: h, Body: b}
}
