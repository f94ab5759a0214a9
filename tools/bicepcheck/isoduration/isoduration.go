// Package isoduration reads the ISO 8601 durations Service Bus uses (PT1M, P14D): days, hours,
// minutes and seconds, no years or months (their length is not fixed).
package isoduration

import (
	"regexp"
	"strconv"
	"strings"
)

var pattern = regexp.MustCompile(`^P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)S)?)?$`)

// Seconds returns the length of s in seconds; ok is false when s is not such a duration.
func Seconds(s string) (seconds int, ok bool) {
	m := pattern.FindStringSubmatch(s)
	if m == nil || s == "P" || strings.HasSuffix(s, "T") {
		return 0, false
	}
	for i, unit := range []int{86400, 3600, 60, 1} {
		if m[i+1] != "" {
			n, err := strconv.Atoi(m[i+1])
			if err != nil {
				return 0, false
			}
			seconds += n * unit
		}
	}
	return seconds, true
}
