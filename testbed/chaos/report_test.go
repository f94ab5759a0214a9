package chaos

import (
	"encoding/json"
	"flag"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ordersink/orders-consumer/testbed/faults"
	"github.com/ordersink/orders-consumer/testbed/hostemu"
	"github.com/ordersink/orders-consumer/testbed/orderstream"
	"github.com/ordersink/orders-consumer/testbed/rig"
	"github.com/ordersink/orders-consumer/testbed/verify"
)

const (
	bodyA  = `{"orderId":"A","customerId":"C","currency":"EUR","lines":[{"sku":"S","quantity":1,"unitPrice":"1.00"}],"total":"1.00","placedAt":"2026-11-29T10:00:00Z"}`
	bodyA2 = `{"orderId":"A","customerId":"C","currency":"EUR","lines":[{"sku":"S","quantity":2,"unitPrice":"1.00"}],"total":"2.00","placedAt":"2026-11-29T10:00:00Z"}`
	bodyX  = `{"orderId":"X","lines":[`
)

func parked(reason, body string) hostemu.OutputMessage {
	b, _ := json.MarshalIndent(map[string]any{"reason": reason, "body": body}, "", "  ")
	return hostemu.OutputMessage{Binding: "parking", Type: "serviceBus", Entity: "orders-deadletter", ContentType: "text/plain", Text: string(b)}
}

func invocation(outputs []hostemu.OutputMessage, msgs ...*hostemu.Message) *hostemu.Invocation {
	inv := &hostemu.Invocation{ID: "inv", Function: "F", Outputs: outputs}
	for _, m := range msgs {
		inv.Deliveries = append(inv.Deliveries, hostemu.Delivery{Message: m, DeliveryCount: 1})
		inv.Settlements = append(inv.Settlements, hostemu.Completed)
	}
	return inv
}

// The figures of a run where the mutated copy (A2) won the create: the
// original's deliveries are the mismatches, whatever order they came in.
func TestCountWhicheverContentWins(t *testing.T) {
	a, a2, x := &hostemu.Message{Body: []byte(bodyA)}, &hostemu.Message{Body: []byte(bodyA2)}, &hostemu.Message{Body: []byte(bodyX)}
	storedA2 := []StoredOrder{{ID: "A", OrderID: "A", RequestHash: orderstream.ContentKey([]byte(bodyA2))}}
	invs := []*hostemu.Invocation{
		invocation([]hostemu.OutputMessage{parked("HashMismatch", bodyA), parked("HashMismatch", bodyA), parked("MalformedMessage", bodyX)}, a2, a, a, x),
		invocation(nil, a2),
	}
	got := Count([]*hostemu.Message{a, a2, x}, invs, storedA2, 0, "orders-deadletter")
	want := Contents{StoredOrders: 1, Invocations: 2,
		MismatchDeliveries: 2, MismatchesParked: 2, InvalidDeliveries: 1, InvalidParked: 1, DuplicatesAbsorbed: 1, storedContentDeliveries: 2}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("figures\n got %+v\nwant %+v", got, want)
	}
}

// The report prints the result of every check, names the violations, and a
// run with one fails.
func TestSummaryPrintsTheChecks(t *testing.T) {
	ok := &verify.Check{Name: "nothing lost", Checked: 3}
	bad := &verify.Check{Name: "no valid order parked RetryBudgetExhausted or dead-lettered", Checked: 3,
		Violations: []string{"valid message A (order A) was parked RetryBudgetExhausted at delivery 9"}}
	r := &Report{Findings: &verify.Findings{Checks: []*verify.Check{ok, bad}}}
	var out strings.Builder
	r.Print(&out)
	for _, want := range []string{"ok   nothing lost (3 checked, 0 violations)", "FAIL no valid order parked RetryBudgetExhausted or dead-lettered (3 checked, 1 violations)", "- valid message A (order A) was parked RetryBudgetExhausted", "invariant violations = 1", "INVARIANT VIOLATED"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, out.String())
		}
	}
	if r.OK() {
		t.Error("OK with a violation")
	}
	bad.Violations = nil
	if !r.OK() {
		t.Error("not OK without violations")
	}
}

// The rerun command names the seed and every flag given, not the files of
// the run's own logs.
func TestRerunCommand(t *testing.T) {
	fs := flag.NewFlagSet("chaos", flag.ContinueOnError)
	fs.Uint64("seed", 0, "")
	fs.Int("messages", 10000, "")
	fs.Int("kills", 5, "")
	fs.String("history-html", "", "")
	if err := fs.Parse([]string{"-messages", "2000", "-history-html", ".local/logs/x/history.html"}); err != nil {
		t.Fatal(err)
	}
	if got, want := RerunCommand("chaos", fs, 42), "make chaos CHAOS_ARGS='-seed 42 -messages 2000'"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// A kill that fell inside an outage says so: its first invocation had to
// wait for Cosmos DB to answer again; so does a first invocation that was
// itself slow (faults), not late to start (soak seed 425066: one kill
// +32.47 s, unexplained by the report of the time).
func TestKillsDuringAnOutageAreNamed(t *testing.T) {
	t0 := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	r := &Report{Instances: 3,
		Outages: []faults.OutageRecord{{Start: t0.Add(10 * time.Second), End: t0.Add(70 * time.Second)}},
		Kills: []rig.InstanceKill{
			{Instance: 1, At: t0.Add(5 * time.Second), Back: 80 * time.Millisecond},
			{Instance: 3, At: t0.Add(90 * time.Second), Back: 6660 * time.Millisecond, Took: 4900 * time.Millisecond},
			{Instance: 2, At: t0.Add(38 * time.Second), Back: 32470 * time.Millisecond},
			{Instance: 3, At: t0.Add(70 * time.Second), Back: 0},
		}}
	var out strings.Builder
	r.Print(&out)
	want := "by instance: 1 +80ms, 3 +6.66s (the invocation itself 4.9s), 2 +32.47s (killed in outage 1, 32s before its end), 3 none\n"
	if !strings.Contains(out.String(), want) {
		t.Errorf("instances row lacks %q:\n%s", want, out.String())
	}
}
