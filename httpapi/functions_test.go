package httpapi

import (
	"testing"
	"time"
)

// An unset SubmitDeadline (zero, as Functions without the setting has it)
// gets its default; a set one is kept.
func TestSubmitDeadlineDefaultFillsOnlyTheUnset(t *testing.T) {
	if got := (Functions{}).withDefaults().SubmitDeadline; got != DefaultSubmitDeadline {
		t.Errorf("an unset SubmitDeadline became %s, want the default %s", got, DefaultSubmitDeadline)
	}
	if got := (Functions{SubmitDeadline: 3 * time.Second}).withDefaults().SubmitDeadline; got != 3*time.Second {
		t.Errorf("a set SubmitDeadline became %s, want it kept: 3s", got)
	}
}
