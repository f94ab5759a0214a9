package funcapp

import (
	"fmt"
	"regexp"
	"strconv"
	"time"
)

var timeSpan = regexp.MustCompile(`^(?:(\d+)\.)?(\d{1,2}):(\d{2}):(\d{2})(?:\.(\d{1,7}))?$`)

// ParseTimeSpan reads a .NET TimeSpan as host.json writes it:
// [d.]hh:mm:ss[.fffffff].
func ParseTimeSpan(s string) (time.Duration, error) {
	m := timeSpan.FindStringSubmatch(s)
	if m == nil {
		return 0, fmt.Errorf("%q is not a time span such as 00:05:00", s)
	}
	n := func(s string) time.Duration { v, _ := strconv.Atoi(s); return time.Duration(v) }
	frac := m[5] + "0000000"[len(m[5]):]
	return n(m[1])*24*time.Hour + n(m[2])*time.Hour + n(m[3])*time.Minute + n(m[4])*time.Second + n(frac)*100, nil
}
