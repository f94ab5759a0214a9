package bench

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
)

// MicroResult is one go test benchmark over several runs (-count).
type MicroResult struct {
	Package string
	Name    string // without the -GOMAXPROCS suffix
	// Samples holds each run's value by unit: ns/op, B/op, allocs/op,
	// MB/s and custom units such as ns/msg.
	Samples map[string][]float64
}

// Median returns the median of a unit's samples, and whether there were any.
func (m MicroResult) Median(unit string) (float64, bool) {
	s := m.Samples[unit]
	if len(s) == 0 {
		return 0, false
	}
	return median(s), true
}

// Range returns the smallest and largest sample of a unit.
func (m MicroResult) Range(unit string) (lo, hi float64) {
	s := append([]float64(nil), m.Samples[unit]...)
	sort.Float64s(s)
	if len(s) == 0 {
		return 0, 0
	}
	return s[0], s[len(s)-1]
}

// RunMicro runs go test -bench on pkgs from dir with -benchmem and returns
// the parsed results and the raw output.
func RunMicro(ctx context.Context, dir string, pkgs []string, pattern string, count int, benchtime string) ([]MicroResult, string, error) {
	args := append([]string{"test", "-run", "^$", "-bench", pattern, "-benchmem",
		"-count", strconv.Itoa(count), "-benchtime", benchtime}, pkgs...)
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	cmd.Env = os.Environ()
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return nil, out.String(), fmt.Errorf("go %s: %w\n%s", strings.Join(args, " "), err, out.String())
	}
	return ParseMicro(out.String()), out.String(), nil
}

// ParseMicro reads go test -bench output.
func ParseMicro(out string) []MicroResult {
	var (
		pkg     string
		order   []string
		results = map[string]*MicroResult{}
	)
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		if p, ok := strings.CutPrefix(line, "pkg: "); ok {
			pkg = strings.TrimSpace(p)
			continue
		}
		f := strings.Fields(line)
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
			continue
		}
		if _, err := strconv.Atoi(f[1]); err != nil {
			continue
		}
		name := f[0]
		if i := strings.LastIndex(name, "-"); i > 0 {
			if _, err := strconv.Atoi(name[i+1:]); err == nil {
				name = name[:i]
			}
		}
		key := pkg + " " + name
		r, ok := results[key]
		if !ok {
			r = &MicroResult{Package: pkg, Name: name, Samples: map[string][]float64{}}
			results[key] = r
			order = append(order, key)
		}
		for i := 2; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				continue
			}
			r.Samples[f[i+1]] = append(r.Samples[f[i+1]], v)
		}
	}
	out2 := make([]MicroResult, len(order))
	for i, k := range order {
		out2[i] = *results[k]
	}
	return out2
}

func median(s []float64) float64 {
	c := append([]float64(nil), s...)
	sort.Float64s(c)
	n := len(c)
	if n%2 == 1 {
		return c[n/2]
	}
	return (c[n/2-1] + c[n/2]) / 2
}
