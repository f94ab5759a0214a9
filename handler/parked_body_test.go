package handler

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ordersink/orders-consumer/handler/handlertest"
	"github.com/ordersink/orders-consumer/orders"
	"github.com/ordersink/orders-consumer/orders/orderstest"
)

// budgetServer serves cfg with a fixed clock.
func budgetServer(t *testing.T, cfg Config) *testServer {
	t.Helper()
	if cfg.Processor == nil {
		cfg.Processor = &orders.Processor{Store: testEnv(t).Store}
	}
	cfg.Processor.Now, cfg.Now = handlertest.FixedNow, handlertest.FixedNow
	return startServerWith(t, cfg)
}

// invalidBody is a body parked as ValidationFailed (it lacks every field but
// orderId) whose envelope grows by one byte per byte of n.
func invalidBody(id string, n int) []byte {
	return []byte(`{"orderId":"` + id + `","note":"` + strings.Repeat("x", n) + `"}`)
}

// escapingBody is an invalid body of n escaped quotes, each taking two
// bytes in the body and four in the envelope, in members of at most 16 Ki
// of them (within any per-string limit of the parser).
func escapingBody(id string, n int) []byte {
	var b strings.Builder
	b.WriteString(`{"orderId":"` + id + `"`)
	for i := 0; n > 0; i++ {
		k := min(n, 16<<10)
		fmt.Fprintf(&b, `,"note%d":"%s"`, i, strings.Repeat(`\"`, k))
		n -= k
	}
	b.WriteString("}")
	return []byte(b.String())
}

// describe summarises an envelope without its body.
func describe(e *ParkingEnvelope) string {
	if e == nil {
		return "no envelope"
	}
	return fmt.Sprintf("%s %q orderId %.40q body %d bytes (ref %v) sha %s", e.Reason, e.Description, e.OrderID, e.BodyBytes, e.BodyRef, e.BodySHA256)
}

func TestParkingEnvelopeFitsTheBudgetAtTheLimit(t *testing.T) {
	const maxMessage = 32 << 10
	budget := maxMessage - HeaderAllowance
	s := budgetServer(t, Config{MaxMessageBytes: maxMessage})
	id := fmt.Sprintf("ORD-BUDGET-%d", time.Now().UnixNano())
	// A first guess a little under the limit (bodyBytes gains digits as the
	// body grows), then the exact count.
	n := budget - handlertest.HostSize(t, s.invoke(t, hostInvocation(invalidBody(id, 0), id, 1)).Outputs[ParkingBinding]) - 10
	n += budget - handlertest.HostSize(t, s.invoke(t, hostInvocation(invalidBody(id, n), id, 1)).Outputs[ParkingBinding])

	for _, tc := range []struct {
		name   string
		body   []byte
		inline bool
	}{
		{"just under", invalidBody(id, n-1), true},
		{"at the limit", invalidBody(id, n), true},
		{"just over", invalidBody(id, n+1), false},
		{"escaped characters, far over", escapingBody(id, 100<<10), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := s.invoke(t, hostInvocation(tc.body, id, 1))
			raw := a.Outputs[ParkingBinding]
			e := a.parked(t)
			if a.Status != http.StatusOK || e == nil || e.Reason != orders.ValidationFailed {
				t.Fatalf("status %d, envelope %s", a.Status, describe(e))
			}
			if size := handlertest.HostSize(t, raw); size > budget {
				t.Fatalf("envelope is %d bytes as the host sends it, over the budget %d", size, budget)
			}
			if e.OrderID != id || e.MessageID != id || e.BodyBytes != len(tc.body) || e.BodySHA256 != orders.BodySHA256(tc.body) {
				t.Errorf("envelope does not identify the message: %s", describe(e))
			}
			if tc.inline {
				if e.BodyRef != nil || e.Body != string(tc.body) {
					t.Fatalf("body not kept inline: %s", describe(e))
				}
				return
			}
			if e.BodyRef == nil || e.Body != "" || e.BodyRef.PartitionKey != id {
				t.Fatalf("envelope over the budget: %s", describe(e))
			}
			doc := parkedBodyDoc(t, e.BodyRef)
			if doc["body"] != string(tc.body) || doc["bodySha256"] != e.BodySHA256 || doc["ttl"] != float64(orders.ParkedBodyTTL) {
				t.Errorf("parked body document does not hold the body: sha %v ttl %v", doc["bodySha256"], doc["ttl"])
			}
		})
	}
}

// parkedBodyDoc reads the document a BodyRef points to.
func parkedBodyDoc(t *testing.T, ref *BodyRef) map[string]any {
	t.Helper()
	for _, d := range partition(t, ref.PartitionKey) {
		if d["id"] == ref.ID {
			if d["type"] != orders.TypeParkedBody {
				t.Fatalf("document %s has type %v", ref.ID, d["type"])
			}
			return d
		}
	}
	t.Fatalf("no document %s in partition %s", ref.ID, ref.PartitionKey)
	return nil
}

// An oversized envelope of a body without a usable orderId, and one that is
// not UTF-8, still parks with its full identity and its exact bytes.
func TestParkingEnvelopeOverBudgetWithoutOrderID(t *testing.T) {
	s := budgetServer(t, Config{})
	big := strings.Repeat(`\"`, 100<<10)
	for name, body := range map[string][]byte{
		"not JSON":         []byte(`{"note":"` + big),
		"orderId too long": escapingBody(big, 0),
		"not UTF-8":        []byte("{\xff" + big),
	} {
		t.Run(name, func(t *testing.T) {
			msgID := fmt.Sprintf("MSG-%d", time.Now().UnixNano())
			a := s.invoke(t, hostInvocation(body, msgID, 1))
			e := a.parked(t)
			if a.Status != http.StatusOK || e == nil || e.BodyRef == nil {
				t.Fatalf("status %d, envelope %s", a.Status, describe(e))
			}
			if size := handlertest.HostSize(t, a.Outputs[ParkingBinding]); size > DefaultMaxMessageBytes-HeaderAllowance {
				t.Fatalf("envelope is %d bytes", size)
			}
			if e.MessageID != msgID || e.BodySHA256 != orders.BodySHA256(body) || !strings.HasPrefix(e.BodyRef.PartitionKey, "parked-body:") {
				t.Errorf("envelope %s", describe(e))
			}
			doc := parkedBodyDoc(t, e.BodyRef)
			got := doc["body"].(string)
			if doc["bodyEncoding"] == "base64" {
				b, err := base64.StdEncoding.DecodeString(got)
				if err != nil {
					t.Fatal(err)
				}
				got = string(b)
			}
			if got != string(body) {
				t.Error("the parked body is not the message's body")
			}
		})
	}
}

// When the body cannot be kept, the message is not completed with a
// fragment: the broker keeps it and redelivers it.
func TestParkingEnvelopeOverBudgetStoreDownIsRetried(t *testing.T) {
	store := orderstest.NewMemStore()
	store.Fail = &orders.StoreError{Op: "park body", IsTransient: true, Err: fmt.Errorf("503 Service Unavailable")}
	// The orderId holds no order: the refusal goes on to park the body.
	s := budgetServer(t, Config{Processor: &orders.Processor{Store: store, Reader: noOrders{}}})
	body := escapingBody("ORD-DOWN", 100<<10)
	a := s.invoke(t, hostInvocation(body, "ORD-DOWN", 1))
	if a.Status/100 == 2 {
		t.Fatalf("status %d: an envelope that cannot be sent whole must not complete the message", a.Status)
	}
	if !strings.Contains(s.Logs.String(), "park message ORD-DOWN") {
		t.Errorf("the log does not say why: %s", s.Logs.String())
	}
}

// noOrders is an order reader that finds no order.
type noOrders struct{}

func (noOrders) ReadOrder(context.Context, string) (json.RawMessage, error) { return nil, nil }

// An envelope's text is cut only past maxEnvelopeText runes (not bytes),
// and a cut is marked.
func TestClipAtTheLimit(t *testing.T) {
	at := strings.Repeat("é", maxEnvelopeText)
	if got := Clip(at); got != at {
		t.Errorf("a text of exactly %d runes was cut to %d", maxEnvelopeText, len([]rune(got)))
	}
	if got := Clip(at + "x"); got != at+"…" {
		t.Errorf("a text of %d runes: %d runes, want the first %d and a mark", maxEnvelopeText+1, len([]rune(got)), maxEnvelopeText)
	}
}
