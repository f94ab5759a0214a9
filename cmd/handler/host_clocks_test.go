package main

import (
	"strings"
	"testing"
	"time"
)

// TestHostClockSettingsOverrideHostJSON: HOST_FUNCTION_TIMEOUT and
// HOST_MAX_AUTO_LOCK_RENEWAL take the place of host.json's functionTimeout
// and maxAutoLockRenewalDuration (an app whose host.json is changed by app
// settings, AzureFunctionsJobHost__…), and every deadline checked against a
// clock follows the setting: at most 90 % of it, to the second.
func TestHostClockSettingsOverrideHostJSON(t *testing.T) {
	tests := []struct {
		name     string
		env      map[string]string
		function time.Duration // the clocks loadConfig must end with
		renewal  time.Duration
		refused  string // "" when the configuration loads
	}{
		{"both settings over a 1-minute host.json", map[string]string{"HOST_JSON": "testdata/host-1m.json",
			"HOST_FUNCTION_TIMEOUT": "5m", "HOST_MAX_AUTO_LOCK_RENEWAL": "5m"}, 5 * time.Minute, 5 * time.Minute, ""},
		{"functionTimeout set, host.json's 1-minute lock renewal kept", map[string]string{"HOST_JSON": "testdata/host-1m.json",
			"HOST_FUNCTION_TIMEOUT": "5m"}, 5 * time.Minute, time.Minute, "MESSAGE_DEADLINE 4m0s exceeds the host's maxAutoLockRenewalDuration 1m0s"},
		{"lock renewal set, host.json's 1-minute functionTimeout kept", map[string]string{"HOST_JSON": "testdata/host-1m.json",
			"HOST_MAX_AUTO_LOCK_RENEWAL": "5m"}, time.Minute, 5 * time.Minute, "MESSAGE_DEADLINE 4m0s exceeds the host's functionTimeout 1m0s"},
		{"shorter functionTimeout than host.json's", map[string]string{"HOST_JSON": "../../host.json",
			"HOST_FUNCTION_TIMEOUT": "2m"}, 2 * time.Minute, 5 * time.Minute, "MESSAGE_DEADLINE 4m0s exceeds the host's functionTimeout 2m0s"},
		{"shorter lock renewal than host.json's", map[string]string{"HOST_JSON": "../../host.json",
			"HOST_MAX_AUTO_LOCK_RENEWAL": "2m"}, 5 * time.Minute, 2 * time.Minute, "MESSAGE_DEADLINE 4m0s exceeds the host's maxAutoLockRenewalDuration 2m0s"},
		{"message deadline at 90 % of a set functionTimeout", map[string]string{"HOST_JSON": "../../host.json",
			"HOST_FUNCTION_TIMEOUT": "2m", "MESSAGE_DEADLINE": "108s"}, 2 * time.Minute, 5 * time.Minute, ""},
		{"message deadline a second past 90 %", map[string]string{"HOST_JSON": "../../host.json",
			"HOST_FUNCTION_TIMEOUT": "2m", "MESSAGE_DEADLINE": "109s"}, 2 * time.Minute, 5 * time.Minute, "MESSAGE_DEADLINE 1m49s exceeds the host's functionTimeout 2m0s: it may take at most 1m48s"},
		{"message deadline at 90 % of a set lock renewal", map[string]string{"HOST_JSON": "../../host.json",
			"HOST_MAX_AUTO_LOCK_RENEWAL": "2m", "MESSAGE_DEADLINE": "108s"}, 5 * time.Minute, 2 * time.Minute, ""},
		{"message deadline a second past 90 % of a set lock renewal", map[string]string{"HOST_JSON": "../../host.json",
			"HOST_MAX_AUTO_LOCK_RENEWAL": "2m", "MESSAGE_DEADLINE": "109s"}, 5 * time.Minute, 2 * time.Minute, "maxAutoLockRenewalDuration 2m0s: it may take at most 1m48s"},
		{"batch deadline follows a short functionTimeout", map[string]string{"HOST_JSON": "../../host.json",
			"HOST_FUNCTION_TIMEOUT": "30s", "MESSAGE_DEADLINE": "27s", "BATCH_DEADLINE": "28s"}, 30 * time.Second, 5 * time.Minute,
			"BATCH_DEADLINE 28s exceeds the host's functionTimeout 30s: it may take at most 27s"},
		{"submit deadline follows a short functionTimeout", map[string]string{"HOST_JSON": "../../host.json",
			"HOST_FUNCTION_TIMEOUT": "20s", "MESSAGE_DEADLINE": "18s", "BATCH_DEADLINE": "18s"}, 20 * time.Second, 5 * time.Minute,
			"SUBMIT_DEADLINE 20s exceeds the host's functionTimeout 20s: it may take at most 18s"},
		{"every deadline within a short functionTimeout", map[string]string{"HOST_JSON": "../../host.json",
			"HOST_FUNCTION_TIMEOUT": "20s", "MESSAGE_DEADLINE": "18s", "BATCH_DEADLINE": "18s", "SUBMIT_DEADLINE": "18s"},
			20 * time.Second, 5 * time.Minute, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := loadConfigWith(t, tc.env)
			if tc.refused != "" {
				if err == nil || !strings.Contains(err.Error(), tc.refused) {
					t.Fatalf("err = %v, want one saying %q", err, tc.refused)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.Host.FunctionTimeout != tc.function || c.Host.LockRenewal != tc.renewal {
				t.Errorf("clocks: functionTimeout %s, maxAutoLockRenewal %s; want %s, %s", c.Host.FunctionTimeout, c.Host.LockRenewal, tc.function, tc.renewal)
			}
		})
	}
}
