package handler

import (
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/ordersink/orders-consumer/internal/hostjson"
)

// DefaultMaxMessageBytes is the largest message a Service Bus Standard
// namespace takes (Premium: up to 100 MB, set per entity).
const DefaultMaxMessageBytes = 256 << 10

// HeaderAllowance is the part of the message size limit left for headers:
// the limit counts the body together with the system and application
// properties, and the output binding sets a few (content type, message id).
const HeaderAllowance = 2 << 10

// OutputTooLargeError is an output message that would be refused by the
// broker: the host would fail the invocation after our answer, and the
// message would come back until the broker dead-letters it without a reason.
type OutputTooLargeError struct {
	Size, Budget int
}

func (e *OutputTooLargeError) Error() string {
	return fmt.Sprintf("%d bytes as the Functions host sends it, over the budget of %d bytes for one Service Bus message", e.Size, e.Budget)
}

// OutputBudget returns the check every message the consumer sends must pass:
// v, encoded as JSON, measured the way the Functions host re-serialises it
// for the Service Bus output (indented, dates and numbers re-printed), must
// fit a message of maxMessageBytes (zero means DefaultMaxMessageBytes) less
// the header allowance. A [json.RawMessage] is taken as encoding/json wrote
// it. The error is an *OutputTooLargeError when it does not fit.
func OutputBudget(maxMessageBytes int) func(v any) error {
	if maxMessageBytes <= 0 {
		maxMessageBytes = DefaultMaxMessageBytes
	}
	budget := maxMessageBytes - HeaderAllowance
	return func(v any) error {
		// An event arrives encoded (orders.AcceptanceBatch.Event): measure
		// those bytes rather than encode them again.
		raw, ok := v.(json.RawMessage)
		if !ok {
			var err error
			if raw, err = json.Marshal(v); err != nil {
				return fmt.Errorf("encode output: %w", err)
			}
		}
		// Most outputs are far below the budget: a one-pass bound decides
		// them without re-serialising.
		if utf8.Valid(raw) && hostjson.MaxSize(raw) <= budget {
			return nil
		}
		n, err := hostjson.Size(raw)
		if err != nil {
			return err
		}
		if n > budget {
			return &OutputTooLargeError{Size: n, Budget: budget}
		}
		return nil
	}
}
