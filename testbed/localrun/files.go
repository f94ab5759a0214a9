package localrun

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"

	"github.com/ordersink/orders-consumer/internal/localqueue"
	"github.com/ordersink/orders-consumer/testbed/hostemu"
)

// outFiles keeps what a run leaves behind in one folder: the messages each
// Service Bus output binding sent (one JSONL file per queue or topic), the
// broker's dead letters, the handler's output and the stream delivered.
type outFiles struct {
	dir string
	// resume appends to the files an earlier run left (-resume): they are
	// the local queues, and a parked message stays until ordersctl completes
	// or resubmits it.
	resume bool

	mu      sync.Mutex
	files   map[string]*os.File
	writers map[string]*bufio.Writer
	counts  map[string]int
	last    map[string]int64 // highest sequenceNumber in each file
}

func newOutFiles(dir string, resume bool) (*outFiles, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	return &outFiles{dir: dir, resume: resume, files: map[string]*os.File{}, writers: map[string]*bufio.Writer{},
		counts: map[string]int{}, last: map[string]int64{}}, nil
}

func (f *outFiles) path(name string) string { return filepath.Join(f.dir, name) }

// serviceBus records a message an output binding sent.
func (f *outFiles) serviceBus(inv *hostemu.Invocation, m hostemu.OutputMessage) error {
	ids := make([]string, len(inv.Deliveries))
	for i, d := range inv.Deliveries {
		ids[i] = d.Message.MessageID
	}
	return f.appendLine(localqueue.OutputFile(m.Entity), &localqueue.Sent{Entity: m.Entity, Function: inv.Function, InvocationID: inv.ID,
		MessageIDs: ids, ContentType: m.ContentType, Body: m.Text, Base64Trap: m.Base64Trap})
}

func (f *outFiles) deadLetters(queue string, dls []hostemu.DeadLetter) (string, error) {
	name := localqueue.DeadLetterFile(queue)
	for _, d := range dls {
		line := &localqueue.DeadLetter{MessageID: d.Message.MessageID,
			DeliveryCount: d.DeliveryCount, Reason: d.Reason, Description: d.Description, Subject: d.Message.Subject}
		line.SetBody(d.Message.Body)
		if err := f.appendLine(name, line); err != nil {
			return "", err
		}
	}
	return f.path(name), nil
}

// appendLine writes v as the next line of the file name; a *localqueue.Sent
// or *localqueue.DeadLetter gets the file's next sequence number (a dead-letter sub-queue
// numbers its messages anew; the orders queue's own numbers restart with
// every run).
func (f *outFiles) appendLine(name string, v any) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	w, ok := f.writers[name]
	if !ok {
		flags := os.O_CREATE | os.O_WRONLY | os.O_TRUNC
		if f.resume {
			flags = os.O_CREATE | os.O_WRONLY | os.O_APPEND
			last, err := localqueue.LastSequence(f.path(name))
			if err != nil {
				return err
			}
			f.last[name] = last
		}
		file, err := os.OpenFile(f.path(name), flags, 0o644)
		if err != nil {
			return err
		}
		f.files[name], w = file, bufio.NewWriter(file)
		f.writers[name] = w
	}
	switch m := v.(type) {
	case *localqueue.Sent:
		f.last[name]++
		m.SequenceNumber = f.last[name]
	case *localqueue.DeadLetter:
		f.last[name]++
		m.SequenceNumber = f.last[name]
	}
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	f.counts[name]++
	_, _ = w.Write(b)
	return w.WriteByte('\n')
}

// written lists the files with their line counts.
func (f *outFiles) written() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for name, n := range f.counts {
		out = append(out, fmt.Sprintf("%s (%d)", f.path(name), n))
	}
	sort.Strings(out)
	return out
}

func (f *outFiles) close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	var first error
	for name, w := range f.writers {
		if err := w.Flush(); err != nil && first == nil {
			first = err
		}
		if err := f.files[name].Close(); err != nil && first == nil {
			first = err
		}
		delete(f.writers, name) // a second close has nothing left to do
	}
	return first
}

// removeStale deletes the JSONL files an earlier run left, so each file
// holds this run's messages only.
func (f *outFiles) removeStale() {
	old, _ := filepath.Glob(f.path("*.jsonl"))
	for _, p := range old {
		_ = os.Remove(p)
	}
}
