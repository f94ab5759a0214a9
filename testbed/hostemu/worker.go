package hostemu

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/ordersink/orders-consumer/internal/loopback"
)

// DefaultMaxStartErrors is how many failed starts or unexpected exits the host
// tolerates before it shuts down (3 within 30 minutes in the real host).
const DefaultMaxStartErrors = 3

// probeInterval is the host's readiness polling period.
const probeInterval = 25 * time.Millisecond

// WorkerConfig says how to start the custom handler.
type WorkerConfig struct {
	Path    string   // resolved executable
	Dir     string   // working directory
	Args    []string // customHandler.description.arguments, expanded
	Env     []string // the app settings; the FUNCTIONS_* variables are added
	AppRoot string
	// InitializationTimeout bounds each start (default 30 s).
	InitializationTimeout time.Duration
	// MaxStartErrors: failed starts plus unexpected exits that make the
	// host give up (default 3). Kills the host asked for do not count.
	MaxStartErrors int
	// Output receives the handler's stdout and stderr.
	Output io.Writer
	// Log receives the host's own lines ("worker process exited" …).
	Log func(string)
}

// Worker runs the custom handler process like the host: a free port in
// FUNCTIONS_CUSTOMHANDLER_PORT, GET / every 25 ms until anything answers, and
// on exit what the host does with the exit code: 0 is not restarted (later
// invocations fail until the host recycles), 200 is restarted quietly,
// anything else is restarted and counted as an error. Kill lets a chaos run
// SIGKILL it; Restart is the host's restart after a function timeout.
type Worker struct {
	cfg  WorkerConfig
	port int

	mu         sync.Mutex
	proc       *os.Process
	procExited <-chan struct{} // closed once proc's exit is booked (not ready)
	readyCh    chan struct{}   // closed while the current process is ready
	ready      bool
	killing    bool
	stopping   bool
	fatal      error         // why the worker gave up: the start budget spent, or an exit 0 not restarted
	fatalCh    chan struct{} // closed when fatal is set
	stats      WorkerStats
	done       chan struct{}
}

// WorkerStats counts what happened to the handler process.
type WorkerStats struct {
	Starts, Kills, UnexpectedExits, StartErrors int
	// TimeoutRestarts counts restarts after a function timeout.
	TimeoutRestarts int
}

// StartWorker starts the handler and keeps it running until Stop. It returns
// at once; Endpoint waits for readiness.
func StartWorker(cfg WorkerConfig) (*Worker, error) {
	if cfg.InitializationTimeout <= 0 {
		cfg.InitializationTimeout = 30 * time.Second
	}
	if cfg.MaxStartErrors <= 0 {
		cfg.MaxStartErrors = DefaultMaxStartErrors
	}
	if cfg.Output == nil {
		cfg.Output = io.Discard
	}
	cfg.Output = &lockedWriter{w: cfg.Output}
	if cfg.Log == nil {
		cfg.Log = func(string) {}
	}
	port, err := loopback.FreePort()
	if err != nil {
		return nil, fmt.Errorf("pick a port for the handler: %w", err)
	}
	w := &Worker{cfg: cfg, port: port, readyCh: make(chan struct{}), fatalCh: make(chan struct{}), done: make(chan struct{})}
	go w.supervise()
	return w, nil
}

// URL is the base URL the host invokes: always 127.0.0.1.
func (w *Worker) URL() string { return "http://127.0.0.1:" + strconv.Itoa(w.port) }

// Endpoint waits until the handler answers and returns its base URL.
func (w *Worker) Endpoint(ctx context.Context) (string, error) {
	for {
		w.mu.Lock()
		ready, ch, fatal := w.ready, w.readyCh, w.fatal
		w.mu.Unlock()
		if fatal != nil {
			return "", fatal
		}
		if ready {
			return w.URL(), nil
		}
		select {
		case <-ch:
		case <-w.fatalCh:
		case <-w.done:
			return "", errors.New("the handler was stopped")
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
}

// Kill sends SIGKILL to the running handler; the worker restarts it. It is
// what a chaos run uses to take the handler away mid-invocation.
func (w *Worker) Kill() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.killLocked(&w.stats.Kills)
}

// Restart replaces the handler process, as the host does when an invocation
// passes functionTimeout: every invocation in flight on it fails.
func (w *Worker) Restart(reason string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.killLocked(&w.stats.TimeoutRestarts); err != nil {
		return err
	}
	w.cfg.Log("restarting the handler: " + reason)
	return nil
}

func (w *Worker) killLocked(counter *int) error {
	if w.proc == nil || w.stopping {
		return errors.New("no handler process is running")
	}
	w.killing = true
	*counter++
	// The host learns of the exit and holds new invocations until the
	// restart answers; only those already sent fail.
	w.markNotReadyLocked()
	return w.proc.Signal(syscall.SIGKILL)
}

// AwaitExit waits, at most d, until the worker has seen the exit of the
// process it reported ready. The host calls it after a request to the
// handler failed: a process that exited on its own is reaped a moment
// later, and without the wait the next deliveries would all meet its closed
// port in that moment, as fast as the broker redelivers.
func (w *Worker) AwaitExit(d time.Duration) {
	w.mu.Lock()
	exited := w.procExited
	w.mu.Unlock()
	if exited == nil {
		return
	}
	select {
	case <-exited:
	case <-time.After(d):
	}
}

// markNotReadyLocked ends a ready period. The channel is replaced only here,
// so a waiter always holds the channel the next ready period closes.
func (w *Worker) markNotReadyLocked() {
	if w.ready {
		w.ready = false
		w.readyCh = make(chan struct{})
	}
}

// Stop ends the handler (SIGTERM, then SIGKILL after grace) and waits.
func (w *Worker) Stop(grace time.Duration) {
	w.mu.Lock()
	w.stopping = true
	proc := w.proc
	w.mu.Unlock()
	if proc != nil {
		_ = proc.Signal(syscall.SIGTERM)
	}
	select {
	case <-w.done:
	case <-time.After(grace):
		w.mu.Lock()
		if w.proc != nil {
			_ = w.proc.Signal(syscall.SIGKILL)
		}
		w.mu.Unlock()
		<-w.done
	}
}

// Stats returns the process counters.
func (w *Worker) Stats() WorkerStats {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.stats
}

// Err returns why the worker gave up, or nil.
func (w *Worker) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.fatal
}

func (w *Worker) supervise() {
	defer close(w.done)
	for {
		if w.isStopping() {
			return
		}
		exited, err := w.startOnce()
		if errors.Is(err, errKilled) {
			continue
		}
		if err != nil {
			w.cfg.Log(err.Error())
			if w.startError() {
				return
			}
			continue
		}
		if w.afterExit(<-exited) {
			return
		}
	}
}

// startOnce starts the process and waits until it answers GET /.
func (w *Worker) startOnce() (<-chan error, error) {
	workerID := newGUID()
	cmd := exec.Command(w.cfg.Path, w.cfg.Args...)
	cmd.Dir = w.cfg.Dir
	cmd.Env = append(append([]string(nil), w.cfg.Env...),
		"FUNCTIONS_CUSTOMHANDLER_PORT="+strconv.Itoa(w.port),
		"FUNCTIONS_HTTPWORKER_PORT="+strconv.Itoa(w.port),
		"FUNCTIONS_CUSTOMHANDLER_WORKER_ID="+workerID,
		"FUNCTIONS_HTTPWORKER_ID="+workerID,
		"FUNCTIONS_APP_ROOT_PATH="+w.cfg.AppRoot,
	)
	cmd.Stdout, cmd.Stderr = w.cfg.Output, w.cfg.Output
	// The handler must not outlive the emulator, whatever ends it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start handler %s: %w", w.cfg.Path, err)
	}
	exited := make(chan struct{})
	var exitErr error
	go func() { exitErr = cmd.Wait(); close(exited) }()

	w.mu.Lock()
	noticed := make(chan struct{})
	w.proc, w.procExited = cmd.Process, noticed
	w.stats.Starts++
	w.mu.Unlock()

	if err := w.probe(exited); err != nil {
		_ = cmd.Process.Signal(syscall.SIGKILL)
		<-exited
		defer close(noticed)
		w.mu.Lock()
		killed := w.killing
		w.proc, w.killing = nil, false
		w.mu.Unlock()
		if killed {
			// A chaos kill during start-up: start again, no error booked.
			return nil, errKilled
		}
		if exitErr != nil && !errors.Is(err, errProbeTimeout) {
			err = fmt.Errorf("%w (%v)", err, exitErr)
		}
		return nil, err
	}
	w.mu.Lock()
	w.ready = true
	close(w.readyCh)
	w.mu.Unlock()
	w.cfg.Log(fmt.Sprintf("handler pid %d ready on %s", cmd.Process.Pid, w.URL()))
	done := make(chan error, 1)
	go func() {
		<-exited
		w.mu.Lock()
		w.markNotReadyLocked()
		w.proc = nil
		w.mu.Unlock()
		close(noticed)
		if !w.isStopping() {
			w.cfg.Log(fmt.Sprintf("worker process %d exited: %v", cmd.Process.Pid, exitStatus(exitErr)))
		}
		done <- exitErr
	}()
	return done, nil
}

var (
	errProbeTimeout = errors.New("initializing the custom handler timed out")
	errKilled       = errors.New("killed while starting")
)

// probe polls GET / until any HTTP answer: a refused connection means "not
// yet", any status means ready.
func (w *Worker) probe(exited <-chan struct{}) error {
	client := &http.Client{Timeout: time.Second}
	deadline := time.After(w.cfg.InitializationTimeout)
	tick := time.NewTicker(probeInterval)
	defer tick.Stop()
	for {
		resp, err := client.Get(w.URL() + "/")
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			return nil
		}
		select {
		case <-exited:
			return errors.New("the handler exited before it answered GET /")
		case <-deadline:
			return fmt.Errorf("%w: no answer to GET %s/ within %s", errProbeTimeout, w.URL(), w.cfg.InitializationTimeout)
		case <-tick.C:
		}
		if w.isStopping() {
			return errors.New("stopping")
		}
	}
}

func (w *Worker) isStopping() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.stopping
}

// lockedWriter lets the process's stdout and stderr copiers, across
// restarts, share one writer.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
