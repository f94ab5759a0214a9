package localrun

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ordersink/orders-consumer/cosmos/cosmostest"
	"github.com/ordersink/orders-consumer/orders"
	"github.com/ordersink/orders-consumer/producer"
	"github.com/ordersink/orders-consumer/testbed/faults"
	"github.com/ordersink/orders-consumer/testbed/hostemu"
	"github.com/ordersink/orders-consumer/testbed/orderstream"
)

func orderBody(id, total string) []byte {
	return []byte(`{"orderId":"` + id + `","customerId":"CUST-1","currency":"EUR","lines":[{"sku":"SKU-1","quantity":1,"unitPrice":"` +
		total + `"}],"total":"` + total + `","placedAt":"2026-12-01T09:00:00Z"}`)
}

func producerMessage(t *testing.T, body []byte) *hostemu.Message {
	t.Helper()
	m, err := producer.OrderMessage(body)
	if err != nil {
		t.Fatal(err)
	}
	return &hostemu.Message{MessageID: *m.MessageID, Body: m.Body, ContentType: *m.ContentType, Subject: *m.Subject}
}

// ordersctl is the operator's tool, built from cmd/ordersctl: the bench
// drives it as an operator does, through its command line and output.
type ordersctl string

func buildOrdersctl(t *testing.T) ordersctl {
	t.Helper()
	bin, err := goBuild(t.TempDir(), "ordersctl")
	if err != nil {
		t.Fatal(err)
	}
	return ordersctl(bin)
}

// run runs ordersctl with args and only the variables vars (and PATH), so
// the test's own environment (a Service Bus namespace) does not leak in.
func (o ordersctl) run(t *testing.T, vars map[string]string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, string(o), args...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}
	for k, v := range vars {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		code = exit.ExitCode()
	case err != nil:
		t.Fatalf("ordersctl %s: %v", strings.Join(args, " "), err)
	}
	return code, out.String(), errb.String()
}

// ordersctlParked is the part of ordersctl's parked list --output json the
// test reads.
type ordersctlParked struct {
	OrderID string `json:"orderId"`
	Reason  string `json:"reason"`
}

// ordersctlResult is the part of a change's --output json the test reads.
type ordersctlResult struct {
	Results []struct {
		OrderID string `json:"orderId"`
	} `json:"results"`
	Summary struct {
		Done int `json:"done"`
	} `json:"summary"`
}

// The operator's round trip, locally, with the real handler under the host
// emulator against the Cosmos emulator: a run parks one order as
// HashMismatch and one as RetryBudgetExhausted (an outage longer than its
// retry budget, on tiny clocks); ordersctl lists them, shows one and
// resubmits the exhausted one; a second run (-resume) delivers the
// resubmission, and the order is then stored exactly once, while the
// mismatch stays parked until completed.
func TestEndToEndParkResubmitStore(t *testing.T) {
	env := cosmosDB.Env(t)
	ctl := buildOrdersctl(t)
	out := t.TempDir()
	opts := func(msgs []*hostemu.Message) Options {
		return Options{Functions: []string{"ProcessOrder"},
			// One delivery held for two seconds is the whole retry budget
			// (36 minutes in Azure), so a short outage exhausts it.
			Settings: []string{"RETRY_BUDGET_DELIVERY_COUNT=1", "MESSAGE_DEADLINE=2s", "COSMOS_OPERATION_TIMEOUT=500ms", "COSMOS_PROBE_INTERVAL=200ms"},
			Messages: msgs, MaxConcurrentCalls: 1, OutDir: out, Timeout: time.Minute, KeepDatabase: true}
	}

	// Run 1, one message at a time: C while Cosmos is unreachable for
	// longer than C's budget (Cosmos is back once C is parked and settled:
	// an event, where a wall-clock outage raced C's start), then A, B, and B
	// with other content.
	bodyC := orderBody("ORD-E2E-C", "3.00")
	first := opts([]*hostemu.Message{producerMessage(t, bodyC), producerMessage(t, orderBody("ORD-E2E-A", "1.00")),
		producerMessage(t, orderBody("ORD-E2E-B", "2.00")), producerMessage(t, orderBody("ORD-E2E-B", "2.50"))})
	parkedC := make(chan struct{})
	first.Outages = []faults.Outage{{Kind: faults.Unreachable, After: 0, Until: parkedC}}
	first.Watch = closeWhen(parkedC, func(q hostemu.QueueCounts) bool { return q.Completed+q.DeadLettered > 0 })
	rep := runEndToEnd(t, first)
	store, err := cosmostest.OpenDatabase(env.Options(), rep.Database, "orders")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Delete(context.WithoutCancel(context.Background())) })
	if rep.ExhaustedParked != 1 || rep.MismatchesParked != 1 {
		t.Fatalf("run 1 parked %d exhausted, %d mismatches; want 1 and 1", rep.ExhaustedParked, rep.MismatchesParked)
	}

	stream := resubmitParked(t, ctl, out, bodyC)

	// Run 2 delivers what resubmit sent, into the same database.
	f, err := os.Open(stream)
	if err != nil {
		t.Fatal(err)
	}
	msgs, err := orderstream.Read(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	second := opts(msgs)
	second.Database, second.Resume = rep.Database, true
	if rep := runEndToEnd(t, second); !rep.OK() || rep.StoredOrders != 1 {
		t.Fatalf("run 2 stored %d orders, invariant held: %v; want 1 and true", rep.StoredOrders, rep.OK())
	}

	checkStoredOnce(t, store, "ORD-E2E-A", "ORD-E2E-B", "ORD-E2E-C")
	vars := map[string]string{"COSMOS_ENDPOINT": env.Endpoint, "COSMOS_KEY": env.Key, "COSMOS_DATABASE": rep.Database}
	if code, shown, errs := ctl.run(t, vars, "order", "show", "--local", out, "ORD-E2E-C"); code != 0 || !strings.Contains(shown, orders.TypeOrder) || strings.Contains(shown, "parked") {
		t.Errorf("order show: exit %d (%s)\n%s", code, errs, shown)
	}
	// The mismatch outlived run 2 in the parking file; completing it
	// empties the queue.
	if code, _, errs := ctl.run(t, nil, "parked", "complete", "--local", out, "--yes", "--reason", "HashMismatch"); code != 0 {
		t.Fatalf("complete: exit %d: %s", code, errs)
	}
	if code, listing, _ := ctl.run(t, nil, "parked", "list", "--local", out, "--output", "json"); code != 0 || strings.TrimSpace(listing) != "[]" {
		t.Errorf("left parked: %s", listing)
	}
}

// resubmitParked lists what run 1 parked (C exhausted, B's other content
// a mismatch), shows C and resubmits it with ordersctl; it returns the
// stream resubmit wrote.
func resubmitParked(t *testing.T, ctl ordersctl, out string, bodyC []byte) string {
	t.Helper()
	code, listing, errs := ctl.run(t, nil, "parked", "list", "--local", out, "--output", "json")
	var parked []ordersctlParked
	if code != 0 || json.Unmarshal([]byte(listing), &parked) != nil || len(parked) != 2 ||
		parked[0].Reason != "RetryBudgetExhausted" || parked[0].OrderID != "ORD-E2E-C" || parked[1].Reason != "HashMismatch" {
		t.Fatalf("list: exit %d (%s)\n%s", code, errs, listing)
	}
	if code, shown, _ := ctl.run(t, nil, "parked", "show", "--local", out, "ORD-E2E-C"); code != 0 || !strings.Contains(shown, string(bodyC)) {
		t.Fatalf("show: exit %d\n%s", code, shown)
	}
	stream := filepath.Join(out, "send.jsonl")
	code, resubmitted, errs := ctl.run(t, nil, "parked", "resubmit", "--yes", "--local", out, "--stream", stream, "--output", "json")
	var r ordersctlResult
	if err := json.Unmarshal([]byte(resubmitted), &r); err != nil {
		t.Fatalf("resubmit: exit %d (%s), not a result: %v\n%s", code, errs, err, resubmitted)
	}
	if code != 0 || r.Summary.Done != 1 || len(r.Results) != 1 || r.Results[0].OrderID != "ORD-E2E-C" {
		t.Fatalf("resubmit: exit %d (%s), %+v", code, errs, r)
	}

	return stream
}

// checkStoredOnce: the database holds exactly one order document for each
// of ids.
func checkStoredOnce(t *testing.T, store *cosmostest.Database, ids ...string) {
	t.Helper()
	docs, err := store.Documents(context.Background(), orders.TypeOrder)
	if err != nil {
		t.Fatal(err)
	}
	stored := map[string]int{}
	for _, d := range docs {
		var o struct{ OrderID string }
		_ = json.Unmarshal(d, &o)
		stored[o.OrderID]++
	}
	once := len(docs) == len(ids)
	for _, id := range ids {
		once = once && stored[id] == 1
	}
	if !once {
		t.Errorf("stored orders %v; want %v once each", stored, ids)
	}
}
