package hostemu

import (
	"errors"
	"fmt"
	"os/exec"
)

// afterExit books an exit and reports whether to stop supervising.
func (w *Worker) afterExit(exitErr error) bool {
	w.mu.Lock()
	stopping, killed := w.stopping, w.killing
	w.killing = false
	w.mu.Unlock()
	if stopping {
		return true
	}
	if killed {
		return false
	}
	switch exitCode(exitErr) {
	case 0:
		w.mu.Lock()
		w.stats.UnexpectedExits++
		w.fatal = errors.New("the handler exited with code 0, which the host does not restart: invocations fail until the host recycles")
		close(w.fatalCh) // wakes the waiters in Endpoint; supervising ends here
		w.mu.Unlock()
		w.cfg.Log(w.fatal.Error())
		return true
	case 200:
		return false // the code that asks the host for a quiet restart
	}
	w.mu.Lock()
	w.stats.UnexpectedExits++
	w.mu.Unlock()
	return w.startError()
}

// exitCode is the process's exit code; -1 when a signal ended it.
func exitCode(err error) int {
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.ExitCode()
	}
	return -1
}

func exitStatus(err error) string {
	if err == nil {
		return "exit status 0"
	}
	return err.Error()
}

// startError counts a failed start or an unexpected exit; past the budget the
// worker gives up, as the host shuts down.
func (w *Worker) startError() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopping {
		return true
	}
	w.stats.StartErrors++
	if w.stats.StartErrors >= w.cfg.MaxStartErrors {
		w.fatal = fmt.Errorf("the handler failed to start or exited %d times; the host would shut down", w.stats.StartErrors)
		close(w.fatalCh)
		return true
	}
	return false
}
