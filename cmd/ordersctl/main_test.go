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

	"github.com/ordersink/orders-consumer/cosmos/cosmostest"
)

// The fixtures are in the format internal/localqueue defines: the
// parking output's lines carry the envelope as their body text. They have
// no sequenceNumber, as files of older runs: a line's number stands in.
const fixtures = "testdata/hostemu"

// cosmosDB is the local Cosmos emulator (or COSMOS_ENDPOINT) for order show.
var cosmosDB = cosmostest.NewShared("ordersctl")

func TestMain(m *testing.M) {
	receiveWait = 50 * time.Millisecond // the fakes answer at once; only the empty queue waits
	os.Exit(cosmosDB.Main(m))
}

// session runs ordersctl in process: no terminal, so no progress bar and no
// confirmation prompt unless a test sets them.
type session struct {
	env      map[string]string
	confirm  func(string) bool
	progress *bytes.Buffer
}

func (s session) ctl(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	c := &cli{getenv: func(k string) string { return s.env[k] }, stdout: &out, stderr: &errb, confirm: s.confirm}
	if s.progress != nil {
		c.progress = s.progress
	}
	code = run(context.Background(), args, c)
	return code, out.String(), errb.String()
}

func ctl(t *testing.T, args ...string) (int, string, string) { return session{}.ctl(t, args...) }

func ctlEnv(t *testing.T, env map[string]string, args ...string) (int, string, string) {
	return session{env: env}.ctl(t, args...)
}

func TestParkedListJSONAndFilters(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want []string // messageIds, in order
	}{
		{"everything, parking queue first", nil, []string{"ORD-1:0123456789abcdef", "ORD-2:fedcba9876543210", "BAD-1", "ORD-3:1111222233334444"}},
		{"by reason", []string{"--reason", "RetryBudgetExhausted"}, []string{"ORD-2:fedcba9876543210"}},
		{"by two reasons", []string{"--reason", "RetryBudgetExhausted", "--reason", "MalformedMessage"}, []string{"ORD-2:fedcba9876543210", "BAD-1"}},
		{"broker dead letters by reason", []string{"--reason", "MaxDeliveryCountExceeded"}, []string{"ORD-3:1111222233334444"}},
		{"by order", []string{"--order", "ORD-1"}, []string{"ORD-1:0123456789abcdef"}},
		{"by age: parked in 2026, dead letters have no time", []string{"--older-than", "1h"}, []string{"ORD-1:0123456789abcdef", "ORD-2:fedcba9876543210", "BAD-1"}},
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
	// A description of several lines stays on its row; the dead letter's
	// own sequence number is kept.
	if !strings.Contains(lines[2], "RetryBudgetExhausted") || !strings.Contains(lines[2], "Unavailable second line") ||
		!strings.HasPrefix(strings.Join(strings.Fields(lines[4]), " "), "deadletter 7 ORD-3") {
		t.Errorf("rows %q, %q", lines[2], lines[4])
	}
}

func TestParkedShow(t *testing.T) {
	code, out, _ := ctl(t, "parked", "show", "--local", fixtures, "ORD-3")
	if code != exitOK || !strings.Contains(out, "deadletter") || !strings.Contains(out, "MaxDeliveryCountExceeded") {
		t.Errorf("exit %d:\n%s", code, out)
	}
	code, out, _ = ctl(t, "parked", "show", "--local", fixtures, "--output", "json", "2") // by sequence number
	var got []Parked
	if code != exitOK || json.Unmarshal([]byte(out), &got) != nil || len(got) != 1 || got[0].OrderID != "ORD-2" || got[0].Body != `{"orderId":"ORD-2"}` {
		t.Errorf("by sequence number: exit %d\n%s", code, out)
	}
	code, _, errs := ctl(t, "parked", "show", "--local", fixtures, "ORD-9")
	if code != exitNotFound || !strings.Contains(errs, "ORD-9") {
		t.Errorf("unknown order: exit %d, stderr %q; want %d", code, errs, exitNotFound)
	}
}

// Every command has its own help, with its flags and examples, on stdout.
func TestHelp(t *testing.T) {
	for _, cmd := range commands {
		t.Run(cmd.name, func(t *testing.T) {
			code, out, _ := ctl(t, append(strings.Fields(cmd.name), "--help")...)
			if code != exitOK || !strings.HasPrefix(out, "Usage: ordersctl "+cmd.name) || !strings.Contains(out, "-output") ||
				!strings.Contains(out, "Examples:\n  ordersctl ") {
				t.Errorf("exit %d:\n%s", code, out)
			}
		})
	}
	if code, out, _ := ctl(t, "--help"); code != exitOK || !strings.Contains(out, "Exit codes") {
		t.Errorf("ordersctl --help: exit %d\n%s", code, out)
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
		{[]string{"parked", "frobnicate"}, exitUsage},
		{[]string{"parked", "list", "--output", "yaml"}, exitUsage},
		{[]string{"parked", "list", "--bogus"}, exitUsage},
		{[]string{"parked", "show"}, exitUsage},
		{[]string{"parked", "complete", "--local", fixtures}, exitUsage},              // nothing named or selected
		{[]string{"parked", "complete", "--local", fixtures, "ORD-1"}, exitUsage},     // no terminal, no --yes
		{[]string{"parked", "delete", "--local", fixtures, "--dry-run", "1"}, exitOK}, // the alias
		{[]string{"parked", "complete", "--local", fixtures, "--yes", "ORD-9"}, exitNotFound},
		{[]string{"parked", "resubmit", "--local", fixtures, "--max", "0"}, exitUsage},
		{[]string{"parked", "list", "--local", broken}, exitError},
		{[]string{"order", "show", "ORD-1"}, exitUsage}, // no COSMOS_ENDPOINT
	} {
		if code, _, errs := ctl(t, tc.args...); code != tc.code {
			t.Errorf("%v: exit %d (%s), want %d", tc.args, code, errs, tc.code)
		}
	}
}

// An operator who forgot --namespace (or SERVICEBUS_FULLY_QUALIFIED_NAMESPACE)
// must not read "0 message(s)" off a machine that never ran the local host
// emulator and conclude that nothing is parked.
func TestNoNamespaceAndNoLocalFilesIsAnError(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "hostemu")
	for _, args := range [][]string{
		{"parked", "list"},
		{"parked", "show", "ORD-1"},
		{"parked", "resubmit", "--dry-run"},
		{"parked", "complete", "--dry-run", "--reason", "HashMismatch"},
	} {
		full := append([]string{args[0], args[1], "--local", missing}, args[2:]...)
		code, out, errs := ctl(t, full...)
		if code != exitUsage || out != "" || !strings.Contains(errs, "--namespace") || !strings.Contains(errs, missing) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit %d naming --namespace and %s", args, code, out, errs, exitUsage, missing)
		}
	}
}
