package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"

	"github.com/ordersink/orders-consumer/cosmos/cosmostest"
	"github.com/ordersink/orders-consumer/orders"
)

// withCosmos adds the Cosmos emulator's settings to vars.
func withCosmos(vars map[string]string, env *cosmostest.Env) map[string]string {
	vars["COSMOS_ENDPOINT"], vars["COSMOS_KEY"] = env.Endpoint, env.Key
	vars["COSMOS_DATABASE"], vars["COSMOS_CONTAINER"] = env.Database, env.Container
	return vars
}

// bodyEnvelope is a parking envelope whose body is kept in Cosmos DB.
func bodyEnvelope(t *testing.T, reason string, pb orders.ParkedBody) *azservicebus.ReceivedMessage {
	return envelopeMessage(t, map[string]any{"reason": reason, "orderId": pb.PartitionKey, "messageId": pb.MessageID,
		"bodyRef": map[string]string{"id": pb.ID(), "partitionKey": pb.PartitionKey}, "bodySha256": pb.SHA256})
}

// Parked bodies never expire, so settling their envelope for good deletes
// them, against the Cosmos emulator: not while another envelope points at
// the same (content-addressed) body, not before the complete, and a body
// that cannot be deleted is reported without undoing the settle.
func TestSettlingDeletesTheParkedBody(t *testing.T) {
	env := cosmosDB.Env(t)
	ctx := context.Background()
	id := fmt.Sprintf("ORD-BODY-%d", time.Now().UnixNano())
	shared := orders.NewParkedBody([]byte(`{"orderId":"`+id+`","pad":"`+strings.Repeat("x", 300_000)+`"}`), id, id+":1", orders.HashMismatch, time.Now())
	own := orders.NewParkedBody([]byte(`{"orderId":"`+id+`-2"}`), id+"-2", id+"-2:1", orders.RetryBudgetExhausted, time.Now())
	for _, pb := range []orders.ParkedBody{shared, own} {
		if err := env.Store.ParkBody(ctx, pb); err != nil {
			t.Fatal(err)
		}
	}
	bodyDocs := func(pk string) int {
		t.Helper()
		docs, err := env.Store.PartitionDocuments(ctx, pk)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, raw := range docs {
			var d struct{ Type string }
			if json.Unmarshal(raw, &d) == nil && d.Type == orders.TypeParkedBody {
				n++
			}
		}
		return n
	}
	q := newFakeQueue(bodyEnvelope(t, "HashMismatch", shared), bodyEnvelope(t, "HashMismatch", shared), bodyEnvelope(t, "RetryBudgetExhausted", own))
	snd := &fakeSender{}
	vars := withAzure(t, q, newFakeQueue(), snd)
	withCosmos(vars, env)

	code, out, errs := ctlEnv(t, vars, "parked", "complete", "--yes", "--output", "json", "1")
	if r := decodeResult(t, out); code != exitOK || len(r.Results) != 1 || r.Results[0].Body != "kept: another parked message points at it" || bodyDocs(id) != 1 {
		t.Fatalf("first of two envelopes: exit %d (%s), %+v, %d body documents", code, errs, r.Results, bodyDocs(id))
	}
	code, out, errs = ctlEnv(t, vars, "parked", "complete", "--yes", "--output", "json", "2")
	if r := decodeResult(t, out); code != exitOK || len(r.Results) != 1 || r.Results[0].Body != "deleted" || bodyDocs(id) != 0 {
		t.Fatalf("last envelope: exit %d (%s), %+v, %d body documents", code, errs, r.Results, bodyDocs(id))
	}
	code, out, errs = ctlEnv(t, vars, "parked", "resubmit", "--yes", "--output", "json", own.PartitionKey)
	if r := decodeResult(t, out); code != exitOK || len(snd.sent) != 1 || string(snd.sent[0].Body) != string(own.Body) || r.Results[0].Body != "deleted" || bodyDocs(own.PartitionKey) != 0 {
		t.Fatalf("resubmit: exit %d (%s), sent %d, %+v, %d body documents", code, errs, len(snd.sent), r.Results, bodyDocs(own.PartitionKey))
	}

	// A complete that fails leaves the body: the envelope still points at it.
	if err := env.Store.ParkBody(ctx, own); err != nil {
		t.Fatal(err)
	}
	q = newFakeQueue(bodyEnvelope(t, "RetryBudgetExhausted", own))
	q.failComplete = true
	vars2 := withCosmos(withAzure(t, q, newFakeQueue(), snd), env)
	if code, _, _ := ctlEnv(t, vars2, "parked", "complete", "--yes", "1"); code != exitError || bodyDocs(own.PartitionKey) != 1 {
		t.Fatalf("failed complete: exit %d, %d body documents; want the body kept", code, bodyDocs(own.PartitionKey))
	}

	// A delete that fails is reported; the message stays completed.
	q = newFakeQueue(bodyEnvelope(t, "RetryBudgetExhausted", own))
	vars3 := withCosmos(withAzure(t, q, newFakeQueue(), snd), env)
	old := openBodyStore
	openBodyStore = func(func(string) string) (parkedBodyStore, error) { return failingDelete{}, nil }
	t.Cleanup(func() { openBodyStore = old })
	code, out, errs = ctlEnv(t, vars3, "parked", "complete", "--yes", "--output", "json", "1")
	if r := decodeResult(t, out); code != exitOK || !slices.Equal(q.completed, []int64{1}) || !strings.HasPrefix(r.Results[0].Body, "not deleted: 503") ||
		!strings.Contains(errs, "never expire") {
		t.Errorf("failed delete: exit %d, completed %v, %+v, stderr %q", code, q.completed, r.Results, errs)
	}

	openBodyStore = old

	// An envelope whose body someone deleted already completes; nothing is deleted.
	q = newFakeQueue(bodyEnvelope(t, "HashMismatch", shared))
	code, out, errs = ctlEnv(t, withCosmos(withAzure(t, q, newFakeQueue(), snd), env), "parked", "complete", "--yes", "--output", "json", "1")
	if r := decodeResult(t, out); code != exitOK || len(q.completed) != 1 || r.Results[0].Body != "already gone" || errs != "" {
		t.Errorf("body gone before: exit %d, completed %v, %+v, stderr %q", code, q.completed, r.Results, errs)
	}

	// An Unpublishable envelope's body is a parked body like any other (the
	// publisher keeps the outbox event, which expires, as one): it needs
	// Cosmos DB to be settled and is deleted with the envelope.
	event := orders.NewParkedBody([]byte(`{"id":"`+id+`:event:OrderAccepted","type":"outboxEvent","pad":"`+strings.Repeat("x", 300_000)+`"}`),
		id, id+":event:OrderAccepted", orders.Unpublishable, time.Now())
	if err := env.Store.ParkBody(ctx, event); err != nil {
		t.Fatal(err)
	}
	q = newFakeQueue(bodyEnvelope(t, "Unpublishable", event))
	code, out, _ = ctlEnv(t, withAzure(t, q, newFakeQueue(), snd), "parked", "complete", "--yes", "--output", "json", "1")
	if r := decodeResult(t, out); code != exitError || len(q.completed) != 0 || bodyDocs(id) != 1 {
		t.Errorf("Unpublishable without Cosmos DB: exit %d, completed %v, %+v, %d body documents", code, q.completed, r.Results, bodyDocs(id))
	}
	code, out, errs = ctlEnv(t, withCosmos(withAzure(t, q, newFakeQueue(), snd), env), "parked", "complete", "--yes", "--output", "json", "1")
	if r := decodeResult(t, out); code != exitOK || len(q.completed) != 1 || len(r.Results) != 1 || r.Results[0].Body != "deleted" || bodyDocs(id) != 0 {
		t.Errorf("Unpublishable: exit %d (%s), completed %v, %+v, %d body documents", code, errs, q.completed, r.Results, bodyDocs(id))
	}

	// Without Cosmos DB the envelope is not settled: its body would stay for ever.
	q = newFakeQueue(bodyEnvelope(t, "RetryBudgetExhausted", own))
	code, out, _ = ctlEnv(t, withAzure(t, q, newFakeQueue(), snd), "parked", "complete", "--yes", "--output", "json", "1")
	if r := decodeResult(t, out); code != exitError || len(q.completed) != 0 || !strings.Contains(r.Results[0].Detail, "COSMOS_ENDPOINT") {
		t.Errorf("without Cosmos DB: exit %d, completed %v, %+v", code, q.completed, r.Results)
	}
}

// failingDelete is a store whose deletes fail.
type failingDelete struct{}

func (failingDelete) PartitionDocuments(context.Context, string) ([]json.RawMessage, error) {
	return nil, nil
}

func (failingDelete) ParkedBodyVersions(context.Context, string, string) (map[string]string, error) {
	return map[string]string{"a": "1"}, nil
}

func (failingDelete) DeleteParkedBody(context.Context, string, map[string]string) (int, int, error) {
	return 0, 0, errors.New("503 service unavailable")
}

// A resubmitted message the handler refuses again parks the same body
// again, and its new envelope may reach the parking queue only after
// ordersctl has listed it once more: the body is kept all the same, against
// the Cosmos emulator (the re-park rewrites the body's documents, and the
// delete removes only documents unchanged since before the settle).
func TestResubmitKeepsABodyParkedAgainMeanwhile(t *testing.T) {
	env := cosmosDB.Env(t)
	ctx := context.Background()
	id := fmt.Sprintf("ORD-AGAIN-%d", time.Now().UnixNano())
	pb := orders.NewParkedBody([]byte(`{"orderId":"`+id+`","pad":"`+strings.Repeat("y", 300_000)+`"}`), id, id+":1", orders.HashMismatch, time.Now())
	if err := env.Store.ParkBody(ctx, pb); err != nil {
		t.Fatal(err)
	}
	q := newFakeQueue(bodyEnvelope(t, "HashMismatch", pb))
	snd := &fakeSender{afterSend: func() {
		// The handler receives the resubmitted message, refuses it again
		// and parks its body before its new envelope is sent.
		if err := env.Store.ParkBody(ctx, pb); err != nil {
			t.Errorf("park again: %v", err)
		}
	}}
	code, out, errs := ctlEnv(t, withCosmos(withAzure(t, q, newFakeQueue(), snd), env), "parked", "resubmit", "--yes", "--output", "json", id)
	r := decodeResult(t, out)
	if code != exitOK || len(snd.sent) != 1 || len(r.Results) != 1 {
		t.Fatalf("resubmit: exit %d (%s), sent %d, %+v", code, errs, len(snd.sent), r.Results)
	}
	if r.Results[0].Body != bodyParkedAgain || strings.Contains(errs, "never expire") {
		t.Errorf("body outcome %q, stderr %q; want %q", r.Results[0].Body, errs, bodyParkedAgain)
	}
	docs, err := env.Store.PartitionDocuments(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if body, err := orders.JoinParkedBody(docs, pb.SHA256); err != nil || string(body) != string(pb.Body) {
		t.Errorf("the body parked again reads %d bytes (%v), want its %d", len(body), err, len(pb.Body))
	}
}

// A body whose documents cannot be read before the settle keeps its
// envelope unsettled: settled, the body could stay for ever.
func TestSettleSkipsAMessageWhoseBodyCannotBeRead(t *testing.T) {
	pb := orders.NewParkedBody([]byte(`{"orderId":"ORD-UNREAD"}`), "ORD-UNREAD", "m1", orders.RetryBudgetExhausted, time.Now())
	q := newFakeQueue(bodyEnvelope(t, "RetryBudgetExhausted", pb))
	old := openBodyStore
	openBodyStore = func(func(string) string) (parkedBodyStore, error) { return unreadableBody{}, nil }
	t.Cleanup(func() { openBodyStore = old })
	code, out, errs := ctlEnv(t, withAzure(t, q, newFakeQueue(), &fakeSender{}), "parked", "complete", "--yes", "--output", "json", "1")
	r := decodeResult(t, out)
	if code != exitError || len(q.completed) != 0 || len(r.Results) != 1 || r.Results[0].Action != "skipped" ||
		!strings.Contains(r.Results[0].Detail, "could not be read: 503") {
		t.Errorf("exit %d (%s), completed %v, %+v; want the message skipped, not completed", code, errs, q.completed, r.Results)
	}
}

// unreadableBody is a store whose parked bodies cannot be read.
type unreadableBody struct{ failingDelete }

func (unreadableBody) ParkedBodyVersions(context.Context, string, string) (map[string]string, error) {
	return nil, errors.New("503 service unavailable")
}
