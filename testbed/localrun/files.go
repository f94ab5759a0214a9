package localrun

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"fmt"
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

	mu      sync.Mutex
	files   map[string]*os.File
	writers map[string]*bufio.Writer
	counts  map[string]int
}

func newOutFiles(dir string) (*outFiles, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	return &outFiles{dir: dir, files: map[string]*os.File{}, writers: map[string]*bufio.Writer{}, counts: map[string]int{}}, nil
}

func (f *outFiles) path(name string) string { return filepath.Join(f.dir, name) }

// sentMessage is one line of an output entity's file.
type sentMessage struct {
	Entity       string   `json:"entity"`
	Function     string   `json:"function"`
	InvocationID string   `json:"invocationId"`
	MessageIDs   []string `json:"triggerMessageIds"`
	ContentType  string   `json:"contentType"`
	Body         string   `json:"body"`
	Base64Trap   bool     `json:"base64Trap,omitempty"`
}

// serviceBus records a message an output binding sent.
func (f *outFiles) serviceBus(inv *hostemu.Invocation, m hostemu.OutputMessage) error {
	ids := make([]string, len(inv.Deliveries))
	for i, d := range inv.Deliveries {
		ids[i] = d.Message.MessageID
	}
	return f.appendLine(m.Entity+".jsonl", sentMessage{Entity: m.Entity, Function: inv.Function, InvocationID: inv.ID,
		MessageIDs: ids, ContentType: m.ContentType, Body: m.Text, Base64Trap: m.Base64Trap})
}

// deadLetter is one line of the broker's dead-letter file.
type deadLetter struct {
	SequenceNumber int64  `json:"sequenceNumber"`
	MessageID      string `json:"messageId"`
	DeliveryCount  int    `json:"deliveryCount"`
	Reason         string `json:"deadLetterReason"`
	Description    string `json:"deadLetterErrorDescription"`
	Body           string `json:"body,omitempty"`
	BodyBase64     string `json:"bodyBase64,omitempty"`
}

func (f *outFiles) deadLetters(queue string, dls []hostemu.DeadLetter) (string, error) {
	name := queue + ".deadletter.jsonl"
	for _, d := range dls {
		line := deadLetter{SequenceNumber: d.Message.SequenceNumber, MessageID: d.Message.MessageID,
			DeliveryCount: d.DeliveryCount, Reason: d.Reason, Description: d.Description}
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

func (f *outFiles) appendLine(name string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	w, ok := f.writers[name]
	if !ok {
		file, err := os.Create(f.path(name))
		if err != nil {
			return err
		}
		f.files[name], w = file, bufio.NewWriter(file)
		f.writers[name] = w
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
