package handler

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ordersink/orders-consumer/handler/handlertest"
	"github.com/ordersink/orders-consumer/orders"
	"github.com/ordersink/orders-consumer/orders/orderstest"
)

// corpusCase is one entry of testdata/corpus/cases.json: a body (wrapped in a
// host-format invocation by the test) or a whole request, and the outcome
// docs/contract.md §5 documents for it.
type corpusCase struct {
	Name string `json:"name"`
	File string `json:"file"`
	// body (sent as ProcessOrder receives it: base64), string-body (as a
	// string-typed trigger receives it), base64-body, envelope or
	// generated-huge
	Kind    string `json:"kind"`
	Outcome string `json:"outcome"`
	Reason  string `json:"reason"`
	Mention string `json:"mention"` // what the description must say
	Note    string `json:"note"`
}

const orderIDPlaceholder = "{{ORDER_ID}}"

func loadCorpus(t testing.TB) []corpusCase {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "corpus", "cases.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cases []corpusCase
	if err := json.Unmarshal(raw, &cases); err != nil {
		t.Fatal(err)
	}
	return cases
}

// request builds the invocation for a case with orderID in place of the
// placeholder.
func (c corpusCase) request(t testing.TB, orderID string) []byte {
	t.Helper()
	if body, ok := generatedBody(c.Kind, orderID); ok {
		return hostInvocation(body, orderID, 1)
	}
	raw, err := os.ReadFile(filepath.Join("testdata", "corpus", c.File))
	if err != nil {
		t.Fatal(err)
	}
	raw = bytes.ReplaceAll(raw, []byte(orderIDPlaceholder), []byte(orderID))
	switch c.Kind {
	case "body":
		return hostInvocation(raw, orderID, 1)
	case "string-body":
		return hostStringInvocation(raw, orderID, 1)
	case "base64-body":
		b64, _ := json.Marshal(base64.StdEncoding.EncodeToString(raw))
		return []byte(`{"Data":{"` + TriggerBinding + `":` + string(b64) + `},"Metadata":{"DeliveryCount":"1"}}`)
	}
	return raw
}

// generatedBody makes the bodies at and past each limit that are too large
// to keep as files.
func generatedBody(kind, orderID string) ([]byte, bool) {
	order := strings.Replace(orderstest.ExampleBody, "ORD-2026-000123", orderID, 1)
	// members named name0, name1, … of text repeated to n characters in
	// all, at most 60,000 bytes in one (within the string length limit of docs/contract.md §3).
	members := func(name, text string, n int) string {
		var b strings.Builder
		for i := 0; n > 0; i++ {
			k := min(n, 60000/len(text)) // bytes as written
			fmt.Fprintf(&b, `"%s%d":"%s",`, name, i, strings.Repeat(text, k))
			n -= k
		}
		return b.String()
	}
	inLine := func(s string) []byte {
		return []byte(strings.Replace(order, `"sku":"SKU-1",`, `"sku":"SKU-1",`+s, 1))
	}
	switch kind {
	case "generated-huge": // past MAX_REQUEST_BYTES (4 MiB) once base64
		return []byte(strings.Replace(order, `"currency"`, `"note":"`+strings.Repeat("x", 5<<20)+`","currency"`, 1)), true
	case "generated-under-request-limit": // under it, but past Cosmos' 2 MB per document
		return []byte(strings.Replace(order, `"currency"`, members("note", "x", 2900<<10)+`"currency"`, 1)), true
	case "generated-envelope-over": // its envelope would be ~400 KB indented
		return escapingBody(orderID, 100<<10), true
	case "generated-event-over": // 120 KB of U+0085, which the host escapes: its event ~360 KB
		return inLine(members("x", "\u0085", 60000)), true
	case "generated-event-under": // 244 KB, its event just under the budget
		return inLine(members("x", "x", 244000)), true
	}
	return nil, false
}

func countOrders(t *testing.T) int {
	t.Helper()
	docs, err := testStore(t).Documents(context.Background(), "order")
	if err != nil {
		t.Fatal(err)
	}
	return len(docs)
}

// TestBadInputCorpus runs every case through the real handler against Cosmos:
// each gets its documented outcome with a reason a person can act on, the
// process never fails the invocation, and invalid input writes nothing.
func TestBadInputCorpus(t *testing.T) {
	cases := loadCorpus(t)
	if len(cases) < 40 {
		t.Fatalf("corpus has %d cases; it should keep at least 40", len(cases))
	}
	s := startServer(t, testStore(t), 0)
	before := countOrders(t)
	created := 0
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			id := fmt.Sprintf("CORPUS-%s-%d", c.Name, time.Now().UnixNano())
			a := s.invoke(t, c.request(t, id))
			if c.Outcome == "retried" {
				if a.Status/100 == 2 {
					t.Fatalf("status %d: an undecodable invocation must keep the message in the broker", a.Status)
				}
				mention, _ := json.Marshal(c.Mention) // as it stands in a JSON log line
				if !strings.Contains(s.logsOf(a), strings.Trim(string(mention), `"`)) {
					t.Errorf("the log does not name the fault %q", c.Mention)
				}
			} else if a.Status != http.StatusOK {
				t.Fatalf("status %d: bad input must complete the message, not burn deliveries", a.Status)
			}
			e := a.parked(t)
			switch c.Outcome {
			case "created":
				created++
				if e != nil {
					t.Fatalf("parked %+v, want created", e)
				}
				if n := len(handlertest.DocumentsOfType(partition(t, id), "order")); n != 1 {
					t.Errorf("partition holds %d orders, want 1", n)
				}
			case "invalid":
				if e == nil {
					t.Fatalf("not parked; logs %v", a.Logs)
				}
				if string(e.Reason) != c.Reason || !strings.Contains(e.Description, c.Mention) {
					t.Errorf("parked as %s %q, want %s mentioning %q", e.Reason, e.Description, c.Reason, c.Mention)
				}
				if e.Body == "" && e.BodyRef == nil && c.Name != "empty-body" && c.Name != "whitespace-only" {
					t.Error("the envelope lost the message")
				}
				docs := partition(t, id)
				if n := len(docs) - len(handlertest.DocumentsOfType(docs, orders.TypeParkedBody)); n != 0 {
					t.Errorf("invalid input wrote %d documents besides its parked body", n)
				}
			case "retried":
				// invoke returns early for non-2xx; the host reads nothing.
			default:
				t.Fatalf("unknown outcome %q in cases.json", c.Outcome)
			}
		})
	}
	if after := countOrders(t); after != before+created {
		t.Errorf("orders in the container went from %d to %d; only the %d valid cases may add one", before, after, created)
	}
}

// TestBadInputCorpusBothRoutesAgree sends every body of the corpus through
// ProcessOrder and, as a batch of one, through ProcessOrderBatch: one rule
// for every body shape, so both must reach the same outcome and reason.
func TestBadInputCorpusBothRoutesAgree(t *testing.T) {
	s := startServer(t, testEnv(t).Store, 0)
	for _, c := range loadCorpus(t) {
		if c.Kind != "body" {
			continue // whole requests and host shapes are route-specific
		}
		t.Run(c.Name, func(t *testing.T) {
			id := fmt.Sprintf("ROUTES-%s-%d", c.Name, time.Now().UnixNano())
			single := s.invoke(t, c.request(t, id+"-single"))
			raw, err := os.ReadFile(filepath.Join("testdata", "corpus", c.File))
			if err != nil {
				t.Fatal(err)
			}
			body := bytes.ReplaceAll(raw, []byte(orderIDPlaceholder), []byte(id+"-batch"))
			batch := s.invokeFunction(t, FunctionProcessOrderBatch, hostBatch([]batchMessage{{body: body, messageID: id + "-batch", deliveryCount: 1}}))
			if single.Status != batch.Status {
				t.Fatalf("status: single %d, batch %d", single.Status, batch.Status)
			}
			var reasons [2]orders.Reason
			if e := single.parked(t); e != nil {
				reasons[0] = e.Reason
			}
			if es := batch.parkedAll(t); len(es) == 1 {
				reasons[1] = es[0].Reason
			}
			if single.Outcome() != strings.Join(batch.outcomes(), " ") || reasons[0] != reasons[1] {
				t.Errorf("single %s %s, batch %v %s", single.Outcome(), reasons[0], batch.outcomes(), reasons[1])
			}
		})
	}
}
