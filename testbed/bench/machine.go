package bench

import (
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
)

// Machine describes where a run happened.
type Machine struct {
	CPU       string
	Cores     int
	MemoryKiB int64
	Kernel    string
	Go        string
	Commit    string
	// Load averages (1, 5, 15 min) at the start and the end of the run:
	// on a shared machine they say how busy it was.
	LoadStart, LoadEnd string
}

// DescribeMachine reads /proc and git.
func DescribeMachine() Machine {
	m := Machine{Cores: runtime.NumCPU(), Go: runtime.Version(), LoadStart: LoadAverage()}
	cpu, _ := procFields("/proc/cpuinfo")
	m.CPU = cpu["model name"]
	mem, _ := procFields("/proc/meminfo")
	m.MemoryKiB = kiB(mem["MemTotal"])
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(b))
	}
	if b, err := exec.Command("git", "rev-parse", "--short", "HEAD").Output(); err == nil {
		m.Commit = strings.TrimSpace(string(b))
		if out, err := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(out) > 0 {
			m.Commit += " (with uncommitted changes)"
		}
	}
	return m
}

// LoadAverage returns the 1, 5 and 15 minute load averages.
func LoadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

// procFields reads a /proc file of "key: value" lines (cpuinfo, meminfo,
// status) into a map of trimmed keys and values; the first of a repeated
// key counts.
func procFields(path string) (map[string]string, error) {
	b, err := os.ReadFile(path)
	fields := map[string]string{}
	for line := range strings.Lines(string(b)) {
		k, v, ok := strings.Cut(line, ":")
		k = strings.TrimSpace(k)
		if _, seen := fields[k]; ok && !seen {
			fields[k] = strings.TrimSpace(v)
		}
	}
	return fields, err
}

// kiB reads a /proc size such as "9876 kB"; 0 if it is not one.
func kiB(v string) int64 {
	n, _ := strconv.ParseInt(strings.TrimSuffix(v, " kB"), 10, 64)
	return n
}
