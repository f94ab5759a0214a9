// Package hostemu is a local stand-in for the Azure Functions host reading a
// Service Bus queue: it starts a custom handler like the host does, delivers
// messages in the host's exact wire format (docs/host-wire-format.md),
// settles them like the broker in peek-lock mode, applies output bindings,
// and injects the faults of at-least-once delivery on purpose.
package hostemu

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"
)

// HostVersion is the host version the emulator announces.
const HostVersion = "4.1037.1.1"

// Endpointer gives the base URL of a ready handler, waiting for it if needed.
// *Worker is one; tests may use a fixed URL.
type Endpointer interface {
	Endpoint(ctx context.Context) (string, error)
}

// FixedEndpoint is an Endpointer for a handler that is already running.
type FixedEndpoint string

// Endpoint returns the URL.
func (f FixedEndpoint) Endpoint(context.Context) (string, error) { return string(f), nil }

// Options configure a Host.
type Options struct {
	// Functions are the functions whose Service Bus triggers read Queue;
	// several compete for its messages like listeners on one queue.
	Functions []*Function
	Queue     *Queue
	Handler   Endpointer
	// Transport carries the invocations to Handler; nil is the host's own
	// over loopback TCP (a test on virtual time gives one over a network
	// in memory, internal/pipetest).
	Transport http.RoundTripper
	Encoder   *Encoder // nil: a default one

	// MaxConcurrentCalls bounds single-message invocations in flight per
	// function (host.json extensions.serviceBus.maxConcurrentCalls).
	MaxConcurrentCalls int
	// MaxMessageBatchSize bounds a batch; BatchesInFlight is how many
	// batches of one function run at once (1 in one host instance).
	MaxMessageBatchSize int
	BatchesInFlight     int
	// FunctionTimeout bounds an invocation (host.json functionTimeout; 0:
	// none). An invocation that passes it fails, and the host restarts the
	// handler through Restart: every invocation in flight fails with it.
	FunctionTimeout time.Duration
	// Restart kills and restarts the handler process, normally
	// (*Worker).Restart; nil: the timed-out invocation alone fails.
	Restart func(reason string) error
	// MaxAutoLockRenewalDuration is how long the host renews the lock of a
	// single-message invocation (host.json extensions.serviceBus; 0: never).
	// Batches (cardinality many) are never renewed, as in the extension.
	MaxAutoLockRenewalDuration time.Duration

	// Observe is called once per finished invocation, from the invocation's
	// goroutine, after its messages were settled.
	Observe func(*Invocation)
	// Log receives the host's own lines.
	Log func(string)
	// ServiceBusOut receives the messages Service Bus output bindings send.
	ServiceBusOut func(*Invocation, OutputMessage) error
	// Enqueued is called with each message an output binding puts on Queue
	// (an HTTP function's order, a batch giving a message back), before the
	// queue can deliver it.
	Enqueued func(*Invocation, *Message)
	// MaxMessageBytes is the broker's limit for one output message
	// (0: DefaultMaxMessageBytes, Standard).
	MaxMessageBytes int
	// SendFault, when set, is asked before each output message is sent: an
	// error is the broker refusing the send (throttled, entity missing),
	// which fails the invocation after the handler's 2xx like a message over
	// the size limit.
	SendFault func(*Invocation, OutputMessage) error
}

// Settlement is what happened to one delivery after its invocation.
type Settlement string

// Settlements.
const (
	Completed      Settlement = "completed"
	CompletionLost Settlement = "completion-lost" // redelivered with DeliveryCount+1
	Abandoned      Settlement = "abandoned"       // redelivered with DeliveryCount+1
	DeadLettered   Settlement = "dead-lettered"
	// LockLost: the lock expired while the invocation ran, so its
	// settlement failed; the expiry had already given the message back
	// with DeliveryCount+1 (DeadLettered instead at the last delivery).
	LockLost Settlement = "lock-lost"
)

// Invocation is one call of a function and its outcome.
type Invocation struct {
	ID          string
	Function    string
	Deliveries  []Delivery
	Settlements []Settlement // one per delivery
	Started     time.Time
	Took        time.Duration
	// Status is the HTTP status (0 when there was no answer); Failure is
	// empty on success.
	Status   int
	Failure  string
	Protocol bool // a 2xx the host could not accept
	// TimedOut: the invocation passed FunctionTimeout and the host
	// restarted the handler.
	TimedOut bool
	Logs     []string
	Outputs  []OutputMessage
	// IgnoredOutputs are Outputs keys that name no output binding.
	IgnoredOutputs []string
	// Request and Response are an HTTP trigger's caller request and the
	// answer it got (nil for Service Bus invocations).
	Request  *HTTPRequest
	Response *HTTPResponse
	// requestBody, when set, wraps the request body as it is sent (a
	// change feed run kills the handler with half of it sent).
	requestBody func(io.Reader) io.Reader
}

// OK reports whether the invocation succeeded.
func (inv *Invocation) OK() bool { return inv.Failure == "" }

// Host delivers a queue's messages to functions until every message is
// completed or dead-lettered.
type Host struct {
	opts   Options
	client *http.Client

	quit          context.Context // done once StopReceiving was called
	stopReceiving context.CancelFunc

	mu          sync.Mutex
	lastRestart time.Time // the last restart after a function timeout
	sbOutErr    error
}

// New returns a Host.
func New(opts Options) (*Host, error) {
	if opts.Queue == nil || opts.Handler == nil || len(opts.Functions) == 0 {
		return nil, errors.New("hostemu: Options needs Functions, Queue and Handler")
	}
	for _, fn := range opts.Functions {
		if fn.ServiceBusQueue() != opts.Queue.Name {
			return nil, fmt.Errorf("hostemu: function %s does not read queue %s", fn.Name, opts.Queue.Name)
		}
	}
	if opts.MaxConcurrentCalls <= 0 {
		opts.MaxConcurrentCalls = 16
	}
	if opts.MaxMessageBatchSize <= 0 {
		opts.MaxMessageBatchSize = 1000
	}
	if opts.MaxMessageBytes <= 0 {
		opts.MaxMessageBytes = DefaultMaxMessageBytes
	}
	if opts.BatchesInFlight <= 0 {
		opts.BatchesInFlight = 1
	}
	if opts.Encoder == nil {
		id := newGUID()
		opts.Encoder = &Encoder{Namespace: "hostemu.servicebus.local", ClientID: "hostemu.servicebus.local-" + id}
	}
	if opts.Log == nil {
		opts.Log = func(string) {}
	}
	client := &http.Client{Transport: opts.Transport}
	if opts.Transport == nil {
		conns := opts.MaxConcurrentCalls*len(opts.Functions) + opts.BatchesInFlight
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.MaxIdleConnsPerHost, t.MaxIdleConns = conns, 2*conns
		t.DisableCompression = true
		client.Transport = t
	}
	h := &Host{opts: opts, client: client}
	h.quit, h.stopReceiving = context.WithCancel(context.Background())
	return h, nil
}

// StopReceiving makes Run return once the invocations in flight have
// finished and settled, as an instance shut down gracefully (scaled in)
// does: it takes no message more. ChangeFeed.Retire is the same step for
// the instance's change feed.
func (h *Host) StopReceiving() { h.stopReceiving() }

// Run delivers until the queue is drained, ctx ends, or the handler cannot be
// started; it returns the first such error.
func (h *Host) Run(ctx context.Context) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	receiving, stop := context.WithCancel(ctx)
	defer stop()
	stopWatching := context.AfterFunc(h.quit, stop)
	defer stopWatching()
	var wg sync.WaitGroup
	for _, fn := range h.opts.Functions {
		wg.Go(func() {
			err := h.listen(ctx, receiving, fn)
			if err != nil && !errors.Is(err, ErrDrained) && ctx.Err() == nil && receiving.Err() == nil {
				cancel(err)
			}
		})
	}
	wg.Wait()
	if err := context.Cause(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.sbOutErr
}

// listen runs one function's listener: up to MaxConcurrentCalls
// single-message invocations at once, a burst taking as many slots, released
// together; or BatchesInFlight batches of a "cardinality": "many" function.
func (h *Host) listen(ctx, receiving context.Context, fn *Function) error {
	width := h.opts.MaxConcurrentCalls
	if fn.Trigger().Many() {
		width = h.opts.BatchesInFlight
	}
	slots := make(chan struct{}, width)
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		select {
		case slots <- struct{}{}:
		case <-receiving.Done():
			return context.Cause(receiving)
		}
		// Like the Service Bus processor (prefetchCount 0), receive only
		// what can start now, one message per free slot: a burst wider than
		// that is split, its other copies received as slots free up. Held
		// received, its locks would run out unrenewed behind invocations
		// that an outage keeps busy (make chaos, docs/evidence/chaos.md "Soak").
		free := 1
	take:
		for free < width {
			select {
			case slots <- struct{}{}:
				free++
			default:
				break take
			}
		}
		calls, err := h.receive(receiving, fn, free)
		if err != nil {
			for range free {
				<-slots
			}
			return err
		}
		for range free - len(calls) {
			<-slots
		}
		release := make(chan struct{})
		for _, ds := range calls {
			wg.Go(func() {
				defer func() { <-slots }()
				<-release
				h.invoke(ctx, fn, ds)
			})
		}
		close(release)
	}
}

// receive returns the next invocations to start at once: one batch, or one
// call per message of a unit.
func (h *Host) receive(ctx context.Context, fn *Function, width int) ([][]Delivery, error) {
	if fn.Trigger().Many() {
		batch, err := h.opts.Queue.receive(ctx, h.opts.MaxMessageBatchSize, true)
		return [][]Delivery{batch}, err
	}
	unit, err := h.opts.Queue.receive(ctx, width, false)
	calls := make([][]Delivery, len(unit))
	for i, d := range unit {
		calls[i] = []Delivery{d}
	}
	return calls, err
}

// invoke runs one invocation and settles its deliveries: all completed on
// success, all abandoned on failure.
func (h *Host) invoke(ctx context.Context, fn *Function, ds []Delivery) {
	inv := &Invocation{ID: newGUID(), Function: fn.Name, Deliveries: ds, Started: time.Now()}
	var body []byte
	var err error
	if fn.Trigger().Many() {
		body, err = h.opts.Encoder.Batch(fn, ds)
	} else {
		body, err = h.opts.Encoder.Single(fn, ds[0])
	}
	if err != nil {
		inv.Failure = err.Error()
	} else {
		stopRenewing := h.renewLocks(fn, ds)
		h.call(ctx, fn, inv, body)
		stopRenewing()
	}
	inv.Took = time.Since(inv.Started)
	if ctx.Err() != nil {
		return // the run is over; leave the messages locked
	}
	h.settle(inv)
	if h.opts.Observe != nil {
		h.opts.Observe(inv)
	}
}

// call posts the invocation and applies the answer's output bindings; it
// returns the answer when the invocation succeeded (an HTTP trigger's
// response is in its Outputs).
func (h *Host) call(ctx context.Context, fn *Function, inv *Invocation, body []byte) (answer Answer) {
	if h.opts.FunctionTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, h.opts.FunctionTimeout, errFunctionTimeout)
		defer cancel()
		defer func() {
			if errors.Is(context.Cause(ctx), errFunctionTimeout) && !inv.OK() {
				h.timedOut(inv)
			}
		}()
	}
	base, err := h.opts.Handler.Endpoint(ctx)
	if err != nil {
		inv.Failure = "the handler is not available: " + err.Error()
		return answer
	}
	// The host's ObjectContent has no length: the body goes chunked.
	var rd io.Reader = bytes.NewReader(body)
	if inv.requestBody != nil {
		rd = inv.requestBody(rd)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/"+fn.Name, io.NopCloser(rd))
	if err != nil {
		inv.Failure = err.Error()
		return answer
	}
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	req.Header.Set("X-Azure-Functions-InvocationId", inv.ID)
	req.Header.Set("X-Azure-Functions-HostVersion", HostVersion)
	req.Header.Set("User-Agent", "Azure-Functions-Host/"+HostVersion)
	resp, err := h.client.Do(req)
	if err != nil {
		inv.Failure = "no answer from the handler: " + err.Error()
		if w, ok := h.opts.Handler.(interface{ AwaitExit(time.Duration) }); ok && ctx.Err() == nil {
			w.AwaitExit(time.Second)
		}
		return answer
	}
	a := readAnswer(resp)
	inv.Status, inv.Failure, inv.Protocol = a.Status, a.Failure, a.Protocol
	if !a.OK() {
		return a
	}
	inv.Logs = a.Logs
	// Output bindings run after the 2xx and before the message is
	// completed; a binding error fails the invocation after all.
	outs, ignored, err := bindOutputs(fn, a)
	if err != nil {
		inv.Failure = err.Error()
		return a
	}
	inv.Outputs, inv.IgnoredOutputs = outs, ignored
	h.send(inv, outs)
	h.sendToOwnQueue(inv, inv.Outputs)
	return a
}

// send sends the Service Bus output messages one at a time, as the
// extension's collector does. One over the size limit fails the invocation
// after the 2xx; the messages sent before it stay sent, and Outputs keeps
// only those.
func (h *Host) send(inv *Invocation, outs []OutputMessage) {
	for i, m := range outs {
		if m.ContentType == "" {
			continue
		}
		err := m.checkSize(h.opts.MaxMessageBytes)
		if err == nil && h.opts.SendFault != nil {
			err = h.opts.SendFault(inv, m)
		}
		if err != nil {
			inv.Failure, inv.Outputs = err.Error(), outs[:i]
			return
		}
		if h.opts.ServiceBusOut == nil {
			continue
		}
		if err := h.opts.ServiceBusOut(inv, m); err != nil {
			h.mu.Lock()
			h.sbOutErr = errors.Join(h.sbOutErr, err)
			h.mu.Unlock()
		}
	}
}
