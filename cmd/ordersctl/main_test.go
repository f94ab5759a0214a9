package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ordersink/orders-consumer/internal/cosmostest"
)

// The fixtures are in the format testbed/localrun writes (files.go): the
// parking output's lines carry the envelope as their body text.
const fixtures = "testdata/hostemu"

// cosmosDB is the local Cosmos emulator (or COSMOS_ENDPOINT) for order show.
var cosmosDB = cosmostest.NewShared("ordersctl")

func TestMain(m *testing.M) {
	receiveWait = 50 * time.Millisecond // the fakes answer at once; only the empty queue waits
	os.Exit(cosmosDB.Main(m))
}

func ctl(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	return ctlEnv(t, map[string]string{}, args...)
}

func ctlEnv(t *testing.T, env map[string]string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(context.Background(), args, func(k string) string { return env[k] }, &out, &errb)
	return code, out.String(), errb.String()
}

func TestParkedListJSONAndFilters(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want []string // messageIds, in order
	}{
		{"everything, parking queue first", nil, []string{"ORD-1:0123456789abcdef", "ORD-2:fedcba9876543210", "BAD-1", "ORD-3:1111222233334444"}},
		{"by reason", []string{"--reason", "RetryBudgetExhausted"}, []string{"ORD-2:fedcba9876543210"}},
		{"broker dead letters by reason", []string{"--reason", "MaxDeliveryCountExceeded"}, []string{"ORD-3:1111222233334444"}},
		{"by order", []string{"--order", "ORD-1"}, []string{"ORD-1:0123456789abcdef"}},
		{"nothing matches", []string{"--order", "ORD-9"}, []string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"parked", "list", "--local", fixtures, "--output", "json"}, tc.args...)
			code, out, errs := ctl(t, args...)
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, errs)
			}
			var got []Parked
			if err := json.Unmarshal([]byte(out), &got); err != nil {
				t.Fatalf("output is not a JSON array: %v\n%s", err, out)
			}
			ids := []string{}
			for _, p := range got {
				ids = append(ids, p.MessageID)
			}
			if strings.Join(ids, ",") != strings.Join(tc.want, ",") {
				t.Errorf("messageIds %v, want %v", ids, tc.want)
			}
		})
	}
}

func TestParkedListTable(t *testing.T) {
	code, out, _ := ctl(t, "parked", "list", "--local", fixtures)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != exitOK || len(lines) != 6 || !strings.HasPrefix(lines[0], "QUEUE") || lines[5] != "4 message(s)" {
		t.Fatalf("exit %d, table:\n%s", code, out)
	}
	// A description of several lines stays on its row.
	if !strings.Contains(lines[2], "RetryBudgetExhausted") || !strings.Contains(lines[2], "Unavailable second line") {
		t.Errorf("row %q", lines[2])
	}
}

func TestParkedShow(t *testing.T) {
	code, out, _ := ctl(t, "parked", "show", "--local", fixtures, "ORD-3")
	if code != exitOK || !strings.Contains(out, "deadletter") || !strings.Contains(out, "MaxDeliveryCountExceeded") {
		t.Errorf("exit %d:\n%s", code, out)
	}
	code, _, errs := ctl(t, "parked", "show", "--local", fixtures, "ORD-9")
	if code != exitNotFound || !strings.Contains(errs, "ORD-9") {
		t.Errorf("unknown order: exit %d, stderr %q; want %d", code, errs, exitNotFound)
	}
}

func TestExitCodes(t *testing.T) {
	broken := t.TempDir()
	if err := os.WriteFile(filepath.Join(broken, "orders-deadletter.jsonl"), []byte("{not json\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		code int
	}{
		{[]string{"--help"}, exitOK},
		{[]string{"parked", "list", "--local", t.TempDir()}, exitOK}, // no files: empty queues
		{[]string{"frobnicate"}, exitUsage},
		{[]string{"parked", "list", "--output", "yaml"}, exitUsage},
		{[]string{"parked", "show"}, exitUsage},
		{[]string{"parked", "list", "--local", broken}, exitError},
	} {
		if code, _, errs := ctl(t, tc.args...); code != tc.code {
			t.Errorf("%v: exit %d (%s), want %d", tc.args, code, errs, tc.code)
		}
	}
}
