package bench

import (
	"context"
	"fmt"
	"os/exec"
	"slices"
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
	if s := m.Samples[unit]; len(s) > 0 {
		return slices.Min(s), slices.Max(s)
	}
	return 0, 0
}

// RunMicro runs go test -bench on pkgs, from the working directory, with
// -benchmem and returns the parsed results.
func RunMicro(ctx context.Context, pkgs []string, pattern string, count int, benchtime string) ([]MicroResult, error) {
	args := append([]string{"test", "-run", "^$", "-bench", pattern, "-benchmem",
		"-count", strconv.Itoa(count), "-benchtime", benchtime}, pkgs...)
	out, err := exec.CommandContext(ctx, "go", args...).CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("go %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	return ParseMicro(string(out)), nil
}

// ParseMicro reads go test -bench output.
func ParseMicro(out string) []MicroResult {
	var (
		pkg     string
		results []MicroResult
	)
	for line := range strings.Lines(out) {
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
		r := slices.IndexFunc(results, func(m MicroResult) bool { return m.Package == pkg && m.Name == name })
		if r < 0 {
			results = append(results, MicroResult{Package: pkg, Name: name, Samples: map[string][]float64{}})
			r = len(results) - 1
		}
		for i := 2; i+1 < len(f); i += 2 {
			if v, err := strconv.ParseFloat(f[i], 64); err == nil {
				results[r].Samples[f[i+1]] = append(results[r].Samples[f[i+1]], v)
			}
		}
	}
	return results
}

// median is the middle of s, or the mean of its two middle values.
func median(s []float64) float64 {
	c := slices.Sorted(slices.Values(s))
	n := len(c)
	if n%2 == 1 {
		return c[n/2]
	}
	return (c[n/2-1] + c[n/2]) / 2
}
