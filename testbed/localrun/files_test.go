package localrun

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/ordersink/orders-consumer/internal/localqueue"
)

// A resumed run appends to the local queue files and numbers on from the
// highest sequence number there, so numbers stay unique in the file after
// ordersctl removed lines; a fresh run starts them again.
func TestOutFilesNumberMessagesAcrossResumedRuns(t *testing.T) {
	dir := t.TempDir()
	write := func(resume bool, n int) []int64 {
		t.Helper()
		f, err := newOutFiles(dir, resume)
		if err != nil {
			t.Fatal(err)
		}
		for range n {
			if err := f.appendLine("orders-deadletter.jsonl", &localqueue.Sent{Entity: "orders-deadletter"}); err != nil {
				t.Fatal(err)
			}
		}
		if err := f.close(); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(f.path("orders-deadletter.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		var seqs []int64
		for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			var m localqueue.Sent
			if err := json.Unmarshal([]byte(line), &m); err != nil {
				t.Fatal(err)
			}
			seqs = append(seqs, m.SequenceNumber)
		}
		return seqs
	}
	if got := write(false, 3); len(got) != 3 || got[2] != 3 {
		t.Fatalf("fresh run: %v", got)
	}
	// ordersctl completed message 2; 1 and 3 are still parked.
	path := dir + "/orders-deadletter.jsonl"
	b, err := os.ReadFile(path)
	lines := strings.SplitAfter(string(b), "\n")
	if err != nil || len(lines) < 3 {
		t.Fatalf("%s: %d lines, %v; want the three parked messages", path, len(lines), err)
	}
	if err := os.WriteFile(path, []byte(lines[0]+lines[2]), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := write(true, 2); len(got) != 4 || got[1] != 3 || got[2] != 4 || got[3] != 5 {
		t.Errorf("resumed after a removal: %v, want 1 3 4 5", got)
	}
	if got := write(false, 1); len(got) != 1 || got[0] != 1 {
		t.Errorf("fresh run after: %v", got)
	}
}
