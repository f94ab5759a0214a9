package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"

	"github.com/ordersink/orders-consumer/internal/localqueue"
)

// queues is where parked messages live: Azure Service Bus, or the files of
// the local host emulator.
type queues interface {
	// List reads the queues in the order of queueKinds, changing nothing.
	List(ctx context.Context) ([]Parked, error)
	// Settle hands each message of queue (one of queueKinds) whose
	// sequence number is chosen to act, and completes (removes) it when act
	// returns nil; on an error it stays. The result has an entry per chosen
	// message found: nil when completed, else why not. Messages not chosen
	// are left as they are. walked is called for each message passed on
	// the way, chosen or not, up to the last chosen.
	Settle(ctx context.Context, queue string, chosen map[int64]bool, act actFunc, walked func()) (map[int64]error, error)
	// Cut names the queues the last List stopped reading at its limit
	// (maxPeek in Azure), which hold more than it returned.
	Cut() []string
	// Sender is the orders queue.
	Sender() (messageSender, error)
	Close(ctx context.Context)
}

// actFunc is what a change does to one message before it is completed: ctx
// ends in time for the complete to follow within the message's lock.
type actFunc func(ctx context.Context, p Parked) error

// notCompleted is a message acted on (a resubmission sent) whose complete
// failed: it is still in the queue, and acting on it again gives the
// consumer a duplicate, which it absorbs.
func notCompleted(err error) error {
	return fmt.Errorf("done, but completing it failed (it is still in the queue): %w", err)
}

// messageSender is what sending needs of the orders queue;
// *azservicebus.Sender has it, and so does a local stream file.
type messageSender interface {
	SendMessage(ctx context.Context, m *azservicebus.Message, o *azservicebus.SendMessageOptions) error
}

// localQueues are the files testbed/localrun writes under .local/hostemu
// (their format is internal/localqueue's): <parking queue>.jsonl, one line
// per envelope the parking output sent, and orders.deadletter.jsonl, the
// broker's dead letters. Nothing receives from
// the local parking queue, so it has no dead letters: the parked-deadletter
// queue is always empty here. Messages sent to
// orders are appended to a stream file that `hostemu -stream FILE -resume`
// delivers. Not for use while hostemu runs: it appends to the same files.
type localQueues struct {
	dir, parkingQueue string
	stream            string // the orders queue: a stream file
}

func (l *localQueues) file(queue string) string {
	if queue == deadLetterQueue {
		return filepath.Join(l.dir, localqueue.DeadLetterFile("orders"))
	}
	return filepath.Join(l.dir, localqueue.OutputFile(l.parkingQueue))
}

// parse reads line n of a queue's file; files of older runs have no
// sequence numbers, and then a line's number is its position (Settle
// writes it into the lines it keeps, so it stays the message's).
func (l *localQueues) parse(queue string, n int, b []byte) (Parked, error) {
	number := func(seq int64) int64 {
		if seq == 0 {
			return int64(n)
		}
		return seq
	}
	if queue == parkingQueue {
		var line localqueue.Sent
		if err := json.Unmarshal(b, &line); err != nil {
			return Parked{}, err
		}
		return fromEnvelope(number(line.SequenceNumber), "", []byte(line.Body)), nil
	}
	var line localqueue.DeadLetter
	if err := json.Unmarshal(b, &line); err != nil {
		return Parked{}, err
	}
	body, err := line.DecodeBody()
	if err != nil {
		return Parked{}, err
	}
	return fromDeadLetter(number(line.SequenceNumber), line.MessageID, line.DeliveryCount, line.Reason, line.Description, line.Subject, body), nil
}

// noLocalQueuesError is a local listing without the emulator's folder: most
// likely an operator who meant Azure and forgot --namespace, who must not
// read an empty listing as "nothing is parked".
type noLocalQueuesError struct{ dir string }

func (e *noLocalQueuesError) Error() string {
	return fmt.Sprintf("no --namespace (or SERVICEBUS_FULLY_QUALIFIED_NAMESPACE) for Azure, and no local host emulator files in %s (--local)", e.dir)
}

func (l *localQueues) List(context.Context) ([]Parked, error) {
	if info, err := os.Stat(l.dir); errors.Is(err, fs.ErrNotExist) || err == nil && !info.IsDir() {
		return nil, &noLocalQueuesError{dir: l.dir}
	}
	var out []Parked
	for _, queue := range []string{parkingQueue, deadLetterQueue} {
		lines, err := localqueue.ReadLines(l.file(queue))
		if err != nil {
			return nil, err
		}
		for i, b := range lines {
			p, err := l.parse(queue, i+1, b)
			if err != nil {
				return nil, fmt.Errorf("%s line %d: %w", l.file(queue), i+1, err)
			}
			out = append(out, p)
		}
	}
	return out, nil
}

// Settle rewrites the queue's file without the lines completed. The new
// file replaces the old one by a rename, so a crash leaves either; act has
// already sent a resubmission then, and a second resubmit gives the
// consumer a duplicate it absorbs.
func (l *localQueues) Settle(ctx context.Context, queue string, chosen map[int64]bool, act actFunc, walked func()) (map[int64]error, error) {
	if queue == parkedDeadLetterQueue {
		return map[int64]error{}, nil
	}
	path := l.file(queue)
	var last int64
	for seq := range chosen {
		last = max(last, seq)
	}
	lines, err := localqueue.ReadLines(path)
	if err != nil {
		return nil, err
	}
	results := map[int64]error{}
	var kept bytes.Buffer
	for i, b := range lines {
		p, err := l.parse(queue, i+1, b)
		if err == nil && p.SequenceNumber <= last {
			walked()
		}
		if err == nil && chosen[p.SequenceNumber] {
			if err = ctx.Err(); err == nil {
				err = act(ctx, p)
			}
			results[p.SequenceNumber] = err
			if err == nil {
				continue
			}
		}
		if err := stamp(&b, p.SequenceNumber); err != nil {
			return nil, fmt.Errorf("%s line %d: %w", path, i+1, err)
		}
		kept.Write(b)
		kept.WriteByte('\n')
	}
	if len(results) == 0 {
		return results, nil
	}
	if err := replace(path, kept.Bytes()); err != nil {
		// Nothing was completed: what act did (a resubmission sent) stands,
		// and the message is still parked, as when Service Bus refuses a
		// complete.
		for seq, r := range results {
			if r == nil {
				results[seq] = notCompleted(err)
			}
		}
		return results, err
	}
	return results, nil
}

// replace writes b to path through a rename, so a crash leaves the old
// file or the new one.
func replace(path string, b []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return fmt.Errorf("complete in %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("complete in %s: %w", path, err)
	}
	return nil
}

// stamp writes seq into a line that has no sequenceNumber.
func stamp(line *[]byte, seq int64) error {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(*line, &fields); err != nil {
		return err
	}
	if _, ok := fields["sequenceNumber"]; ok {
		return nil
	}
	fields["sequenceNumber"] = json.RawMessage(strconv.FormatInt(seq, 10))
	b, err := json.Marshal(fields)
	*line = b
	return err
}

func (l *localQueues) Sender() (messageSender, error) { return streamFile(l.stream), nil }

func (l *localQueues) Close(context.Context) {}

// Cut is nil: the local files are read whole.
func (l *localQueues) Cut() []string { return nil }

// streamFile is the local orders queue: each message sent is appended as a
// line of the stream format hostemu -stream reads (internal/localqueue),
// its body so its bytes, and so its MessageId, survive exactly.
type streamFile string

func (s streamFile) SendMessage(_ context.Context, msg *azservicebus.Message, _ *azservicebus.SendMessageOptions) error {
	rec := &localqueue.Record{MessageID: deref(msg.MessageID), ContentType: deref(msg.ContentType), Subject: deref(msg.Subject)}
	rec.SetBody(msg.Body)
	return localqueue.AppendRecord(string(s), rec)
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
