package bench

import "strings"

// The lines that mark a section of docs/evidence/benchmarks.md that make bench does
// not measure (written by hand or by another tool): KeptSections carries it
// into the next report unchanged.
const (
	KeepBegin = "<!-- make bench keeps this section -->"
	KeepEnd   = "<!-- end of kept section -->"
)

// KeptSections returns the marked sections of a previous report, markers
// included, in their order. A section without its end marker runs to the
// end of the file, so nothing written by hand is lost.
func KeptSections(old string) []string {
	var (
		out  []string
		cur  []string
		open bool
	)
	for _, line := range strings.Split(old, "\n") {
		t := strings.TrimSpace(line)
		switch {
		case !open && t == KeepBegin:
			open, cur = true, []string{line}
		case open && t == KeepEnd:
			out = append(out, strings.Join(append(cur, line), "\n"))
			open = false
		case open:
			cur = append(cur, line)
		}
	}
	if open {
		out = append(out, strings.TrimRight(strings.Join(cur, "\n"), "\n")+"\n"+KeepEnd)
	}
	return out
}
