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

// processCPU returns the CPU time (user + system) a process has used so far.
func processCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name (field 2) may hold spaces; the fields after its
	// closing parenthesis are space-separated: state is field 3, utime 14,
	// stime 15.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	f := strings.Fields(s[i+1:])
	if i < 0 || len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: unexpected format", pid)
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("/proc/%d/stat: unexpected format", pid)
	}
	return time.Duration(utime+stime) * clockTick, nil
}

// cpuSince returns a function that reports the CPU time each process has
// used since cpuSince was called; 0 for a process that could not be read.
func cpuSince(pids ...int) func() []time.Duration {
	before := make([]time.Duration, len(pids))
	for i, pid := range pids {
		if pid > 0 {
			before[i], _ = processCPU(pid)
		}
	}
	return func() []time.Duration {
		used := make([]time.Duration, len(pids))
		for i, pid := range pids {
			if pid <= 0 {
				continue // not watched
			}
			if now, err := processCPU(pid); err == nil {
				used[i] = now - before[i]
			}
		}
		return used
	}
}
