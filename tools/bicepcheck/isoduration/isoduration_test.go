package isoduration

import "testing"

func TestSeconds(t *testing.T) {
	for in, want := range map[string]int{"PT1M": 60, "PT20S": 20, "P14D": 14 * 86400, "P1DT1H": 90000, "PT5M": 300} {
		if got, ok := Seconds(in); !ok || got != want {
			t.Errorf("Seconds(%s) = %d, %t; want %d", in, got, ok, want)
		}
	}
	for _, bad := range []string{"", "P", "PT", "1M", "P1Y", "PT1.5S"} {
		if _, ok := Seconds(bad); ok {
			t.Errorf("Seconds(%q) accepted", bad)
		}
	}
}
