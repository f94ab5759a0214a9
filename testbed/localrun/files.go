package localrun

import (
	"bufio"
	"encoding/json"
	"errors"
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

	mu    sync.Mutex
	files map[string]*outFile // by name
}

// outFile is one file being written.
type outFile struct {
	file  *os.File
	w     *bufio.Writer
	lines int
	last  int64 // highest sequenceNumber in the file
}

func newOutFiles(dir string, resume bool) (*outFiles, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	return &outFiles{dir: dir, resume: resume, files: map[string]*outFile{}}, nil
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

// deadLetters records the messages the broker dead-lettered.
func (f *outFiles) deadLetters(queue string, dls []hostemu.DeadLetter) error {
	for _, d := range dls {
		line := &localqueue.DeadLetter{MessageID: d.Message.MessageID,
			DeliveryCount: d.DeliveryCount, Reason: d.Reason, Description: d.Description, Subject: d.Message.Subject}
		line.SetBody(d.Message.Body)
		if err := f.appendLine(localqueue.DeadLetterFile(queue), line); err != nil {
			return err
		}
	}
	return nil
}

// appendLine writes v as the next line of the file name; a *localqueue.Sent
// or *localqueue.DeadLetter gets the file's next sequence number (a dead-letter sub-queue
// numbers its messages anew; the orders queue's own numbers restart with
// every run).
func (f *outFiles) appendLine(name string, v any) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	out, err := f.open(name)
	if err != nil {
		return err
	}
	switch m := v.(type) {
	case *localqueue.Sent:
		out.last++
		m.SequenceNumber = out.last
	case *localqueue.DeadLetter:
		out.last++
		m.SequenceNumber = out.last
	}
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	out.lines++
	_, _ = out.w.Write(b)
	return out.w.WriteByte('\n')
}

// open returns the file name, opened on its first line: truncated, or
// appended to when the run resumes.
func (f *outFiles) open(name string) (*outFile, error) {
	if out, ok := f.files[name]; ok {
		return out, nil
	}
	out, flags := &outFile{}, os.O_CREATE|os.O_WRONLY|os.O_TRUNC
	if f.resume {
		flags = os.O_CREATE | os.O_WRONLY | os.O_APPEND
		last, err := localqueue.LastSequence(f.path(name))
		if err != nil {
			return nil, err
		}
		out.last = last
	}
	file, err := os.OpenFile(f.path(name), flags, 0o644)
	if err != nil {
		return nil, err
	}
	out.file, out.w = file, bufio.NewWriter(file)
	f.files[name] = out
	return out, nil
}

// written lists the files with their line counts.
func (f *outFiles) written() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var list []string
	for name, out := range f.files {
		list = append(list, fmt.Sprintf("%s (%d)", f.path(name), out.lines))
	}
	sort.Strings(list)
	return list
}

func (f *outFiles) close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	var errs []error
	for _, out := range f.files {
		if out.file != nil {
			errs = append(errs, out.w.Flush(), out.file.Close())
			out.file = nil // a second close has nothing left to do
		}
	}
	return errors.Join(errs...)
}

// removeStale deletes the JSONL files an earlier run left, so each file
// holds this run's messages only.
func (f *outFiles) removeStale() {
	old, _ := filepath.Glob(f.path("*.jsonl"))
	for _, p := range old {
		_ = os.Remove(p)
	}
}
