package orders_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/ordersink/orders-consumer/orders"
	"github.com/ordersink/orders-consumer/orders/orderstest"
)

// Admit refuses exactly what Process refuses before writing, with the same
// reason and description, so SubmitOrder and the queue judge alike.
func TestAdmitJudgesAsProcess(t *testing.T) {
	tooBig := errors.New("too big")
	p := &orders.Processor{Store: orderstest.NewMemStore(), EventBudget: func(e json.RawMessage) error {
		if strings.Contains(string(e), "HUGE") {
			return tooBig
		}
		return nil
	}}
	example := orderstest.ExampleBody
	for _, tc := range []struct {
		name, body string
		reason     orders.Reason // "" when admitted
	}{
		{"the example", example, ""},
		{"not JSON", `{"orderId":`, orders.MalformedMessage},
		{"a rule broken", strings.Replace(example, `"EUR"`, `"eur"`, 1), orders.ValidationFailed},
		{"a reserved name", strings.Replace(example, `"total"`, `"ttl":1,"total"`, 1), orders.ValidationFailed},
		{"an event over budget", strings.Replace(example, `"SKU-1"`, `"SKU-1-HUGE"`, 1), orders.ValidationFailed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := []byte(strings.Replace(tc.body, orderstest.ExampleOrderID, "ORD-ADMIT-"+strings.ReplaceAll(tc.name, " ", "-"), 1))
			o, _, err := p.Admit(orders.ReadPayload(body), orders.Submission{})
			var re *orders.RejectError
			if tc.reason == "" {
				if err != nil || o == nil || o.ID == "" {
					t.Fatalf("Admit: %v, %v", o, err)
				}
			} else if !errors.As(err, &re) || re.Reason != tc.reason {
				t.Fatalf("Admit: %v, want a %s RejectError", err, tc.reason)
			}
			r := p.Process(context.Background(), orders.Message{Body: body, DeliveryCount: 1})
			if tc.reason == "" {
				if r.Outcome != orders.Created {
					t.Errorf("Process: %s, Admit admitted it", r.Outcome)
				}
				return
			}
			if r.Outcome != orders.Invalid || r.Reason != tc.reason || r.Description != re.Error() {
				t.Errorf("Process: %s %s %q; Admit: %s %q", r.Outcome, r.Reason, r.Description, re.Reason, re.Error())
			}
		})
	}
}

// Submit decides from the stored order alone: created, this very
// submission's, a resend of its owner, or taken; only a create writes.
func TestSubmitDecidesFromTheStoredOrder(t *testing.T) {
	ctx := context.Background()
	store := orderstest.NewMemStore()
	p := &orders.Processor{Store: store}
	body := orderstest.ExampleBodyWithID("ORD-SUBMIT-1")
	otherContent := []byte(strings.Replace(string(body), `"CUST-42"`, `"CUST-43"`, 1))
	otherMeta := []byte(strings.Replace(string(body), `"web-shop"`, `"call-centre"`, 1))
	a := orders.Submission{Owner: "key:partner-a", ID: "rec-1"}
	submit := func(body []byte, s orders.Submission) orders.Submitted {
		t.Helper()
		o, b, err := p.Admit(orders.ReadPayload(body), s)
		if err != nil {
			t.Fatalf("Admit: %v", err)
		}
		r, err := p.Submit(ctx, o, b, s)
		if err != nil {
			t.Fatalf("Submit: %v", err)
		}
		return r
	}
	first := submit(body, a)
	if first.Outcome != orders.SubmitCreated {
		t.Fatalf("first: %v, want created", first.Outcome)
	}
	var doc struct{ Owner, SubmissionID string }
	if err := json.Unmarshal(first.Document, &doc); err != nil || doc.Owner != a.Owner || doc.SubmissionID != a.ID {
		t.Fatalf("stored document %s: owner and submissionId not kept (%v)", first.Document, err)
	}
	for _, tc := range []struct {
		name string
		body []byte
		s    orders.Submission
		want orders.SubmitOutcome
		same bool
	}{
		{"the same submission again", body, a, orders.SubmitResumed, true},
		{"other meta, same submission", otherMeta, a, orders.SubmitResumed, true},
		{"the same order under a new key", body, orders.Submission{Owner: a.Owner, ID: "rec-2"}, orders.SubmitResent, true},
		{"other content, same owner", otherContent, a, orders.SubmitTaken, true},
		{"another client, other content", otherContent, orders.Submission{Owner: "key:partner-b", ID: "rec-3"}, orders.SubmitTaken, false},
		// The same real-world order, stored by another client or before
		// this client's scope changed: no conflict.
		{"another client, the same content", body, orders.Submission{Owner: "key:partner-b", ID: "rec-3"}, orders.SubmitKnown, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := submit(tc.body, tc.s)
			if r.Outcome != tc.want || r.SameOwner != tc.same {
				t.Errorf("outcome %v sameOwner %v, want %v %v", r.Outcome, r.SameOwner, tc.want, tc.same)
			}
			if string(r.Document) != string(first.Document) {
				t.Errorf("document %s, want the stored %s", r.Document, first.Document)
			}
		})
	}
	docs, _ := store.PartitionDocuments(ctx, "ORD-SUBMIT-1")
	if len(docs) != 2 {
		t.Errorf("partition holds %d documents, want the order and its event only", len(docs))
	}
	// The queue path's order has no owner: known to every client that sends
	// its content, taken for any other content.
	queued := orderstest.ExampleBodyWithID("ORD-SUBMIT-Q")
	if r := p.Process(ctx, orders.Message{Body: queued, DeliveryCount: 1}); r.Outcome != orders.Created {
		t.Fatalf("queue path: %v", r.Outcome)
	}
	if r := submit(queued, orders.Submission{Owner: "anonymous", ID: "rec-4"}); r.Outcome != orders.SubmitKnown || r.SameOwner {
		t.Errorf("a queued order submitted through the API: %v sameOwner %v, want known", r.Outcome, r.SameOwner)
	}
	changed := []byte(strings.Replace(string(queued), `"CUST-42"`, `"CUST-43"`, 1))
	if r := submit(changed, orders.Submission{Owner: "anonymous", ID: "rec-5"}); r.Outcome != orders.SubmitTaken || r.SameOwner {
		t.Errorf("other content for a queued order: %v sameOwner %v, want taken", r.Outcome, r.SameOwner)
	}
}

// A body may not name an owner: it would hand the order to that client.
func TestOwnerAndSubmissionIDAreReserved(t *testing.T) {
	for _, name := range []string{"owner", "submissionId"} {
		body := strings.Replace(orderstest.ExampleBody, `"total"`, `"`+name+`":"key:partner-a","total"`, 1)
		var re *orders.RejectError
		if _, err := orders.ParseOrder([]byte(body)); !errors.As(err, &re) || re.Field != name {
			t.Errorf("%s in the body: %v, want a refusal naming it", name, err)
		}
	}
}

func TestPublicViewShowsTheClientsMembersCanonically(t *testing.T) {
	doc := `{"type":"order","orderId":"ORD-1","id":"ORD-1","meta":{"b":1, "a":2},"owner":"key:a","submissionId":"s",` +
		`"messageId":"m","requestHash":"sha256:x","hashVersion":1,"acceptedAt":"2026-12-01T10:00:00Z","customerId":"C",` +
		`"_rid":"r","_self":"s","_etag":"\"e\"","_attachments":"a/","_ts":1}`
	got, err := orders.PublicView([]byte(doc))
	want := `{"acceptedAt":"2026-12-01T10:00:00Z","customerId":"C","hashVersion":1,"meta":{"a":2,"b":1},"orderId":"ORD-1","requestHash":"sha256:x"}`
	if err != nil || string(got) != want {
		t.Errorf("PublicView:\n got %s (%v)\nwant %s", got, err, want)
	}
	if _, err := orders.PublicView([]byte(`[1]`)); err == nil {
		t.Error("PublicView of an array: no error")
	}
}

// A store may give a document back reprinted: numbers in their shortest
// form, escapes decoded, nested members in another order. The view is the
// same bytes either way, so a 201 built from the document as written and a
// GET built from the stored one agree.
func TestPublicViewIsTheSameWhateverTheStoreReprints(t *testing.T) {
	written := `{"id":"ORD-1","orderId":"ORD-1","meta":{"producer":"caf\u00e9 \u2028 <&>","n":1.50,"e":1E2,"z":-0},"total":"1.00"}`
	reprinted := `{"total":"1.00","meta":{"e":100,"n":1.5,"producer":"café \u2028 <&>","z":0},"orderId":"ORD-1","id":"ORD-1","_ts":5}`
	a, errA := orders.PublicView([]byte(written))
	b, errB := orders.PublicView([]byte(reprinted))
	if errA != nil || errB != nil || string(a) != string(b) {
		t.Errorf("views differ:\n %s (%v)\n %s (%v)", a, errA, b, errB)
	}
}
