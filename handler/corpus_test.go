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
	if c.Kind == "generated-huge" {
		body := strings.Replace(exampleBody, `"currency"`, `"note":"`+strings.Repeat("x", 5<<20)+`","currency"`, 1)
		return hostInvocation([]byte(body), orderID, 1)
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
				if !strings.Contains(s.logs.String(), strings.Trim(string(mention), `"`)) {
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
				if n := len(documentsOfType(partition(t, id), "order")); n != 1 {
					t.Errorf("partition holds %d orders, want 1", n)
				}
			case "invalid":
				if e == nil {
					t.Fatalf("not parked; logs %v", a.Logs)
				}
				if string(e.Reason) != c.Reason || !strings.Contains(e.Description, c.Mention) {
					t.Errorf("parked as %s %q, want %s mentioning %q", e.Reason, e.Description, c.Reason, c.Mention)
				}
				if e.Body == "" && c.Name != "empty-body" && c.Name != "whitespace-only" {
					t.Error("the envelope lost the message")
				}
				if n := len(partition(t, id)); n != 0 {
					t.Errorf("invalid input wrote %d documents", n)
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
