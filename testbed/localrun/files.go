package localrun

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"unicode/utf8"

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

// sentMessage is one line of an output entity's file. SequenceNumber
// numbers the file's messages from 1 as the broker numbers a queue's, so
// ordersctl can name one (parked complete, parked resubmit).
type sentMessage struct {
	SequenceNumber int64    `json:"sequenceNumber"`
	Entity         string   `json:"entity"`
	Function       string   `json:"function"`
	InvocationID   string   `json:"invocationId"`
	MessageIDs     []string `json:"triggerMessageIds"`
	ContentType    string   `json:"contentType"`
	Body           string   `json:"body"`
	Base64Trap     bool     `json:"base64Trap,omitempty"`
}

// serviceBus records a message an output binding sent.
func (f *outFiles) serviceBus(inv *hostemu.Invocation, m hostemu.OutputMessage) error {
	ids := make([]string, len(inv.Deliveries))
	for i, d := range inv.Deliveries {
		ids[i] = d.Message.MessageID
	}
	return f.appendLine(m.Entity+".jsonl", &sentMessage{Entity: m.Entity, Function: inv.Function, InvocationID: inv.ID,
		MessageIDs: ids, ContentType: m.ContentType, Body: m.Text, Base64Trap: m.Base64Trap})
}

// deadLetter is one line of the broker's dead-letter file.
type deadLetter struct {
	// SequenceNumber numbers the file's lines from 1 (appendLine).
	SequenceNumber int64  `json:"sequenceNumber"`
	MessageID      string `json:"messageId"`
	DeliveryCount  int    `json:"deliveryCount"`
	Reason         string `json:"deadLetterReason"`
	Description    string `json:"deadLetterErrorDescription"`
	Subject        string `json:"subject,omitempty"`
	Body           string `json:"body,omitempty"`
	BodyBase64     string `json:"bodyBase64,omitempty"`
}

func (f *outFiles) deadLetters(queue string, dls []hostemu.DeadLetter) (string, error) {
	name := queue + ".deadletter.jsonl"
	for _, d := range dls {
		line := &deadLetter{MessageID: d.Message.MessageID,
			DeliveryCount: d.DeliveryCount, Reason: d.Reason, Description: d.Description, Subject: d.Message.Subject}
		if utf8.Valid(d.Message.Body) {
			line.Body = string(d.Message.Body)
		} else {
			line.BodyBase64 = base64.StdEncoding.EncodeToString(d.Message.Body)
		}
		if err := f.appendLine(name, line); err != nil {
			return "", err
		}
	}
	return f.path(name), nil
}

// appendLine writes v as the next line of the file name; a *sentMessage or
// *deadLetter gets the file's next sequence number (a dead-letter sub-queue
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
			last, err := lastSequence(f.path(name))
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
	case *sentMessage:
		f.last[name]++
		m.SequenceNumber = f.last[name]
	case *deadLetter:
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

// lastSequence is the highest sequenceNumber of a file an earlier run
// wrote (0 when there is none), so a resumed run's numbers stay unique in
// the file after ordersctl removed lines (unlike the broker's, a number
// whose line was the last one removed may be given again).
func lastSequence(path string) (int64, error) {
	file, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	defer file.Close()
	var last int64
	sc := bufio.NewScanner(file)
	sc.Buffer(make([]byte, 64*1024), 8<<20)
	for sc.Scan() {
		var line struct {
			SequenceNumber int64 `json:"sequenceNumber"`
		}
		if json.Unmarshal(sc.Bytes(), &line) == nil {
			last = max(last, line.SequenceNumber)
		}
	}
	return last, sc.Err()
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
