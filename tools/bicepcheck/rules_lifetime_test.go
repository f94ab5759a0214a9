package bicepcheck

import (
	"strings"
	"testing"
)

// The body's ttl comes from the Go package, so no fixture can change it: the rule is held here
// against the repository's Bicep with the value the handler wrote before ADR 0013.
func TestParkedLifetimeCatchesABodyThatExpires(t *testing.T) {
	p, err := Load(bicepDir, repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	if got := parkedLifetime(p, -1); len(got) != 0 {
		t.Fatalf("the repository fails with bodies that never expire: %v", got)
	}
	got := parkedLifetime(p, 14*24*3600)
	if len(got) != 1 || !strings.Contains(got[0].Message, "an envelope could outlive its body: orders.ParkedBodyTTL is 1209600 s") {
		t.Fatalf("findings = %v", got)
	}
}
