package bench

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// clockTick is the unit of utime and stime in /proc/<pid>/stat (USER_HZ,
// 100 on Linux).
const clockTick = 10 * time.Millisecond

// ProcessCPU returns the CPU time (user + system) a process has used so far.
func ProcessCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name (field 2) may hold spaces; the fields after its
	// closing parenthesis are space-separated: state is field 3, utime 14,
	// stime 15.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: unexpected format", pid)
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: unexpected format", pid)
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("/proc/%d/stat: unexpected format", pid)
	}
	return time.Duration(utime+stime) * clockTick, nil
}

// cpuWatch measures the CPU time of processes over a phase.
type cpuWatch struct {
	pids   []int
	before []time.Duration
}

func watchCPU(pids ...int) *cpuWatch {
	w := &cpuWatch{pids: pids, before: make([]time.Duration, len(pids))}
	for i, pid := range pids {
		w.before[i], _ = ProcessCPU(pid)
	}
	return w
}

// used returns the CPU time each process used since watchCPU; 0 for a
// process that could not be read.
func (w *cpuWatch) used() []time.Duration {
	out := make([]time.Duration, len(w.pids))
	for i, pid := range w.pids {
		if pid <= 0 {
			continue
		}
		if now, err := ProcessCPU(pid); err == nil {
			out[i] = now - w.before[i]
		}
	}
	return out
}
