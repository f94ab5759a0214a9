package bench

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"syscall"
	"time"

	"github.com/ordersink/orders-consumer/internal/loopback"
)

// FootprintReport is what the built executable costs to start and to keep.
type FootprintReport struct {
	// Starts are the times from starting the process to its first 200 on
	// GET /, polled every PollEvery, sorted.
	Starts    []time.Duration
	PollEvery time.Duration
	// Resident memory in KiB (VmRSS): after the first answer and a pause,
	// the highest sample under load, the kernel's high-water mark (VmHWM)
	// after the load, and after the load once idle again.
	IdleRSS, LoadPeakRSS, HWM, AfterRSS int64
	// The load: Concurrency invocations at once (LoadPhase has the messages).
	Concurrency int
	LoadPhase   Phase
	// HandlerCPU is the CPU time the handler process used under the load.
	HandlerCPU time.Duration
}

// Process is a running handler executable.
type Process struct {
	cmd  *exec.Cmd
	URL  string
	Pid  int
	done chan error
}

// startReady starts bin on a free loopback port against t and polls GET /
// every poll until it answers 200; it returns the time that took.
func startReady(bin string, t Target, poll time.Duration) (*Process, time.Duration, error) {
	t0 := time.Now()
	port, err := loopback.FreePort()
	if err != nil {
		return nil, 0, err
	}
	cmd := exec.Command(bin)
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"),
		"FUNCTIONS_CUSTOMHANDLER_PORT=" + strconv.Itoa(port),
		"COSMOS_ENDPOINT=" + t.Endpoint,
		"COSMOS_KEY=" + t.Key,
		"COSMOS_DATABASE=" + t.Database,
		"COSMOS_CONTAINER=" + t.Container,
	}
	// Stdout and stderr go to /dev/null: the log lines are still formatted
	// and written, as under the host, without a reader to slow them.
	if err := cmd.Start(); err != nil {
		return nil, 0, err
	}
	p := &Process{cmd: cmd, URL: fmt.Sprintf("http://127.0.0.1:%d", port), Pid: cmd.Process.Pid, done: make(chan error, 1)}
	go func() { p.done <- cmd.Wait() }()
	if err := p.waitReady(poll, 10*time.Second); err != nil {
		_ = p.Stop()
		return nil, 0, err
	}
	return p, time.Since(t0), nil
}

// waitReady polls GET / every interval until it answers 200.
func (p *Process) waitReady(interval, limit time.Duration) error {
	hc := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(limit)
	for {
		resp, err := hc.Get(p.URL + "/")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case err := <-p.done:
			return fmt.Errorf("handler exited before answering: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no answer on %s within %s", p.URL, limit)
		}
		time.Sleep(interval)
	}
}

// Stop sends SIGTERM and waits for the process to exit.
func (p *Process) Stop() error {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-p.done:
		return err
	case <-time.After(30 * time.Second):
		_ = p.cmd.Process.Kill()
		return fmt.Errorf("handler %d did not stop on SIGTERM within 30 s", p.Pid)
	}
}

// Memory reads VmRSS and VmHWM of the process, in KiB.
func (p *Process) Memory() (rss, hwm int64, err error) {
	status, err := procFields(fmt.Sprintf("/proc/%d/status", p.Pid))
	return kiB(status["VmRSS"]), kiB(status["VmHWM"]), err
}

// Footprint starts bin starts times to time its readiness, then once more
// to measure its memory idle and under conc concurrent invocations of
// messages new orders.
func Footprint(ctx context.Context, bin string, t Target, starts, messages, conc, emulatorPID int) (*FootprintReport, error) {
	const poll = 5 * time.Millisecond
	rep := &FootprintReport{PollEvery: poll, Concurrency: conc}
	for range starts {
		p, took, err := startReady(bin, t, poll)
		if err != nil {
			return nil, err
		}
		rep.Starts = append(rep.Starts, took)
		if err := p.Stop(); err != nil {
			return nil, err
		}
	}
	slices.Sort(rep.Starts)

	p, _, err := startReady(bin, t, poll)
	if err != nil {
		return nil, err
	}
	defer p.Stop()
	time.Sleep(time.Second)
	if rep.IdleRSS, _, err = p.Memory(); err != nil {
		return nil, err
	}

	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}, Timeout: 2 * time.Minute}
	v := &Variant{Name: "handler executable, one message per invocation", PerOp: 1, Concurrency: conc,
		counter:     NewCounter(http.DefaultTransport), // the process's requests are not visible here
		EmulatorPID: emulatorPID, prepare: sending(invocations(1), post(hc, p.URL+"/ProcessOrder"))}
	sampling, stop := context.WithCancel(ctx)
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-sampling.Done():
				return
			case <-tick.C:
				if rss, _, err := p.Memory(); err == nil && rss > rep.LoadPeakRSS {
					rep.LoadPeakRSS = rss
				}
			}
		}
	}()
	cpuUsed := cpuSince(p.Pid)
	rep.LoadPhase, err = v.RunPhase(ctx, "FP-"+RunID(), messages)
	rep.HandlerCPU = cpuUsed()[0]
	stop()
	<-sampled
	if err != nil {
		return nil, err
	}
	if _, rep.HWM, err = p.Memory(); err != nil {
		return nil, err
	}
	time.Sleep(2 * time.Second)
	rep.AfterRSS, _, err = p.Memory()
	return rep, err
}
