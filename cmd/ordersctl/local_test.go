package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ordersink/orders-consumer/orders"
)

// localCopy copies the fixtures to a folder the test may change.
func localCopy(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, name := range []string{"orders-deadletter.jsonl", "orders.deadletter.jsonl"} {
		b, err := os.ReadFile(filepath.Join(fixtures, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func listed(t *testing.T, dir string) []string {
	t.Helper()
	code, out, errs := ctl(t, "parked", "list", "--local", dir, "--output", "json")
	var ps []Parked
	if code != exitOK || json.Unmarshal([]byte(out), &ps) != nil {
		t.Fatalf("list: exit %d: %s", code, errs)
	}
	var ids []string
	for _, p := range ps {
		ids = append(ids, p.MessageID)
	}
	return ids
}

type result struct {
	Results []outcome
	Summary summary
}

func decodeResult(t *testing.T, out string) result {
	t.Helper()
	var r result
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("not a result: %v\n%s", err, out)
	}
	return r
}

func TestLocalComplete(t *testing.T) {
	dir := localCopy(t)
	before := strings.Join(listed(t, dir), ",")

	code, out, _ := ctl(t, "parked", "complete", "--local", dir, "--dry-run", "--output", "json", "ORD-1")
	if r := decodeResult(t, out); code != exitOK || r.Summary.Done != 1 || len(r.Results) != 1 || r.Results[0].Action != "would complete" || strings.Join(listed(t, dir), ",") != before {
		t.Fatalf("dry run: exit %d, %+v, queue now %v", code, r, listed(t, dir))
	}
	declined := session{confirm: func(string) bool { return false }}
	if code, _, _ := declined.ctl(t, "parked", "complete", "--local", dir, "ORD-1"); code != exitDeclined || strings.Join(listed(t, dir), ",") != before {
		t.Fatalf("declined: exit %d, queue now %v", code, listed(t, dir))
	}
	var asked string
	agreed := session{confirm: func(q string) bool { asked = q; return true }}
	code, out, errs := agreed.ctl(t, "parked", "complete", "--local", dir, "ORD-1")
	if code != exitOK || !strings.Contains(asked, "1 message(s)") || !strings.Contains(out, "1 done") {
		t.Fatalf("confirmed: exit %d, asked %q\n%s%s", code, asked, out, errs)
	}
	if got := strings.Join(listed(t, dir), ","); got != "ORD-2:fedcba9876543210,BAD-1,ORD-3:1111222233334444" {
		t.Errorf("after completing ORD-1: %s", got)
	}
	// Sequence numbers stay the messages' own after a line is removed.
	if code, _, errs := ctl(t, "parked", "complete", "--local", dir, "--yes", "--from", "deadletter", "7"); code != exitOK {
		t.Fatalf("complete dead letter 7: exit %d: %s", code, errs)
	}
	if code, _, errs := ctl(t, "parked", "complete", "--local", dir, "--yes", "3"); code != exitOK {
		t.Fatalf("complete 3: exit %d: %s", code, errs)
	}
	if got := strings.Join(listed(t, dir), ","); got != "ORD-2:fedcba9876543210" {
		t.Errorf("left: %s", got)
	}
}

func TestLocalResubmit(t *testing.T) {
	dir := localCopy(t)
	stream := filepath.Join(dir, "send.jsonl")
	args := func(more ...string) []string {
		return append([]string{"parked", "resubmit", "--yes", "--local", dir, "--stream", stream, "--output", "json"}, more...)
	}

	code, out, _ := ctl(t, args("--dry-run")...)
	if r := decodeResult(t, out); code != exitOK || len(r.Results) != 1 || r.Results[0].OrderID != "ORD-2" || r.Results[0].Action != "would resubmit" {
		t.Fatalf("dry run: exit %d, %+v", code, r)
	}
	if _, err := os.Stat(stream); err == nil {
		t.Fatal("a dry run wrote to the stream")
	}
	// A send that fails leaves the message parked.
	before := strings.Join(listed(t, dir), ",")
	code, out, _ = ctl(t, "parked", "resubmit", "--yes", "--local", dir, "--stream", filepath.Join(dir, "missing", "send.jsonl"), "--output", "json")
	if r := decodeResult(t, out); code != exitError || r.Summary.Failed != 1 || strings.Join(listed(t, dir), ",") != before {
		t.Fatalf("failed send: exit %d, %+v, queue now %v", code, r.Summary, listed(t, dir))
	}
	// Default: RetryBudgetExhausted only.
	code, out, errs := ctl(t, args()...)
	r := decodeResult(t, out)
	if code != exitOK || r.Summary.Done != 1 || r.Results[0].Action != "resubmitted" || errs != "" {
		t.Fatalf("exit %d, %+v, %s", code, r, errs)
	}
	// Named: any reason, with a warning; the dead-letter queue on request.
	if code, _, errs = ctl(t, args("BAD-1")...); code != exitOK || !strings.Contains(errs, "warning: MalformedMessage") {
		t.Fatalf("BAD-1: exit %d, %q", code, errs)
	}
	if code, _, errs = ctl(t, args("--from", "deadletter")...); code != exitOK {
		t.Fatalf("dead letters: exit %d, %s", code, errs)
	}
	if got := strings.Join(listed(t, dir), ","); got != "ORD-1:0123456789abcdef" {
		t.Errorf("still parked: %s; want only the mismatch", got)
	}

	msgs := readStream(t, stream)
	if len(msgs) != 3 {
		t.Fatalf("%d messages in the stream; want 3", len(msgs))
	}
	for i, want := range []struct{ id, body string }{
		{"ORD-2", `{"orderId":"ORD-2"}`}, {"BAD-1", `{"orderId":`}, {"ORD-3", `{"orderId":"ORD-3"}`},
	} {
		m := msgs[i]
		if string(m.Body) != want.body || !strings.HasPrefix(m.MessageID, orders.MessageID(want.id, []byte(want.body))+":r") || m.ContentType != "application/json" {
			t.Errorf("message %d: %s %q", i, m.MessageID, m.Body)
		}
	}
	if msgs[0].MessageID != r.Results[0].NewMessageID {
		t.Errorf("sent %s, reported %s", msgs[0].MessageID, r.Results[0].NewMessageID)
	}
}

// The bar goes to the progress writer (a terminal), never to stdout.
func TestProgressBarOnlyOnATerminal(t *testing.T) {
	dir := localCopy(t)
	var progress bytes.Buffer
	code, out, _ := session{progress: &progress}.ctl(t, "parked", "complete", "--local", dir, "--yes", "--older-than", "1h")
	if code != exitOK || strings.ContainsAny(out, "\r█") || !strings.Contains(progress.String(), "complete") {
		t.Errorf("exit %d; stdout %q; progress %q", code, out, progress.String())
	}
}

// When the parking file cannot be rewritten after a resubmission was sent,
// the message is reported sent and still parked, not "gone".
func TestLocalResubmitWhoseCompleteFails(t *testing.T) {
	dir := localCopy(t)
	stream := filepath.Join(dir, "send.jsonl")
	if err := os.Mkdir(filepath.Join(dir, "orders-deadletter.jsonl.tmp"), 0o755); err != nil { // the rewrite cannot create its file
		t.Fatal(err)
	}
	before := strings.Join(listed(t, dir), ",")
	code, out, _ := ctl(t, "parked", "resubmit", "--yes", "--local", dir, "--stream", stream, "--output", "json")
	r := decodeResult(t, out)
	if code != exitError || r.Summary.Failed != 1 || r.Summary.Gone != 0 || len(r.Results) == 0 || !strings.Contains(r.Results[0].Detail, "still in the queue") {
		t.Errorf("exit %d, %+v", code, r)
	}
	if got := strings.Join(listed(t, dir), ","); got != before {
		t.Errorf("queue now %s, want %s", got, before)
	}
}
