package funcapp

import (
	"testing"
	"time"
)

func TestParseTimeSpan(t *testing.T) {
	for in, want := range map[string]time.Duration{"00:05:00": 5 * time.Minute, "1.02:00:30": 26*time.Hour + 30*time.Second,
		"00:00:01.5": 1500 * time.Millisecond, "00:00:00.0000001": 100} {
		if got, err := ParseTimeSpan(in); err != nil || got != want {
			t.Errorf("ParseTimeSpan(%q) = %s, %v; want %s", in, got, err, want)
		}
	}
	for _, in := range []string{"5m", "00:05", "-00:05:00", ""} {
		if _, err := ParseTimeSpan(in); err == nil {
			t.Errorf("ParseTimeSpan(%q) accepted", in)
		}
	}
}
