package hostemu

import "testing"

// TestSettingsExpand: %NAME% is the setting's value, an unknown name
// and a lone % are left as written.
func TestSettingsExpand(t *testing.T) {
	s := NewSettings([]string{"PORT=7071", "EMPTY="})
	for arg, want := range map[string]string{"--port=%PORT%": "--port=7071", "%PORT%%PORT%": "70717071", "%EMPTY%x": "x",
		"%MISSING%-%PORT%": "%MISSING%-7071", "100%": "100%", "%%PORT%": "%%PORT%", "a%%b": "a%%b"} {
		if got := s.Expand(arg); got != want {
			t.Errorf("Expand(%q) = %q, want %q", arg, got, want)
		}
	}
}
