package history

import (
	"os/exec"
	"path/filepath"
	"testing"
)

// Every plant of make plant still applies to the tree: a patch that no
// longer does shows nothing.
func TestPlantsApply(t *testing.T) {
	patches, err := filepath.Glob("../plants/*.patch")
	if err != nil || len(patches) < 3 {
		t.Fatalf("plants %v (%v), want at least 3", patches, err)
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	for _, p := range patches {
		abs, _ := filepath.Abs(p)
		if out, err := exec.Command("git", "-C", "../..", "apply", "--check", abs).CombinedOutput(); err != nil {
			t.Errorf("%s no longer applies (testbed/scripts/plant.sh): %v\n%s", filepath.Base(p), err, out)
		}
	}
}
