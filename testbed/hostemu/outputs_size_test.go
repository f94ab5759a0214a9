package hostemu

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// answering returns a handler that answers every invocation 200 with
// Outputs.parking = parking.
func answering(parking ...any) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		b, _ := json.Marshal(map[string]any{"Outputs": map[string]any{"parking": parking}, "Logs": []string{"ok"}, "ReturnValue": nil})
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(b)
	})
}

// sized is an object whose indented text is n bytes: {\n  "a": "x…"\n}.
func sized(n int) map[string]string {
	return map[string]string{"a": strings.Repeat("x", n-len("{\n  \"a\": \"\"\n}"))}
}

func TestOutputOverTheSizeLimitFailsTheInvocationAfterTheAnswer(t *testing.T) {
	const limit = 4096
	atLimit := limit - propertyBytes
	for _, tc := range []struct {
		name string
		size int
		ok   bool
	}{
		{"just under", atLimit - 1, true},
		{"at the limit", atLimit, true},
		{"just over", atLimit + 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			var sent []string
			opts := Options{MaxMessageBytes: limit, ServiceBusOut: func(_ *Invocation, m OutputMessage) error {
				mu.Lock()
				defer mu.Unlock()
				sent = append(sent, m.Text)
				return nil
			}}
			// One small message first: it goes out before the large one fails.
			invs, q := runHost(t, answering(sized(20), sized(tc.size)), singleFunction(), opts, msg("M-1"))
			if len(invs) == 0 {
				t.Fatal("no invocation")
			}
			first := invs[0]
			if tc.ok {
				if !first.OK() || len(sent) != 2 || len(sent[1]) != tc.size || q.Counts().Completed != 1 {
					t.Fatalf("ok=%v (%s), sent %d, counts %+v", first.OK(), first.Failure, len(sent), q.Counts())
				}
				return
			}
			if first.OK() || first.Status != http.StatusOK || !strings.Contains(first.Failure, "MessageSizeExceeded") {
				t.Fatalf("status %d, failure %q: want a failure after the 2xx", first.Status, first.Failure)
			}
			if len(first.Outputs) != 1 || first.Settlements[0] != Abandoned {
				t.Errorf("outputs %d, settlement %s: want the small one sent and the message abandoned", len(first.Outputs), first.Settlements[0])
			}
			// Every delivery sends the small message again, then the
			// broker dead-letters the message without a reason of ours.
			if c := q.Counts(); c.DeadLettered != 1 || len(sent) != len(invs) {
				t.Errorf("counts %+v, %d sent over %d invocations", c, len(sent), len(invs))
			}
		})
	}
}
