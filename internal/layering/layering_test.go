// Package layering checks the direction of the project's dependencies
// (Ben Johnson's Standard Package Layout): orders holds the domain's rules
// and imports no project package and no HTTP, so every adapter depends on
// it and it on none; idempotency stands beside it, not on it.
package layering

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/ordersink/orders-consumer"

// TestDomainImportsNoProjectPackageNorHTTP: the packages that hold rules
// depend, directly or not, on neither another package of this module nor
// net/http. A mechanism that serves an adapter (retrying, requestcharge)
// belongs beside the adapter, never in orders.
func TestDomainImportsNoProjectPackageNorHTTP(t *testing.T) {
	for pkg, forbidden := range map[string][]string{
		"orders":      {module + "/", "net/http"},
		"idempotency": {module + "/", "net/http"},
	} {
		path := module + "/" + pkg
		for _, dep := range deps(t, path) {
			if dep == path {
				continue
			}
			for _, f := range forbidden {
				if dep == strings.TrimSuffix(f, "/") || strings.HasPrefix(dep, f) {
					t.Errorf("%s depends on %s; it must import no project package and not net/http", pkg, dep)
				}
			}
		}
	}
}

// deps is `go list -deps` of path: every package it imports, directly or
// not, itself included.
func deps(t *testing.T, path string) []string {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", path).Output()
	if err != nil {
		t.Fatalf("go list -deps %s: %v", path, err)
	}
	return strings.Fields(string(out))
}
