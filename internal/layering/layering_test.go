// Package layering checks the direction of the project's dependencies
// (Ben Johnson's Standard Package Layout): orders holds the domain's rules
// and imports no project package and no HTTP, so every adapter depends on
// it and it on none; idempotency stands beside it, not on it. handler
// speaks the Functions wire format and knows nothing of the HTTP API built
// on it (httpapi), which reaches the stores through their ports only.
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

// TestWireFormatKnowsNoHTTPAPI: handler depends, directly or not, on
// neither httpapi nor idempotency: the HTTP API is handed to NewServer
// (Config.HTTP), never imported, so the wire format and the queue functions
// build and test without it.
func TestWireFormatKnowsNoHTTPAPI(t *testing.T) {
	for _, dep := range deps(t, module+"/handler") {
		if dep == module+"/httpapi" || dep == module+"/idempotency" {
			t.Errorf("handler depends on %s; the HTTP API is handed to it (Config.HTTP), never imported", dep)
		}
	}
}

// TestHTTPAPIImportsNoAdapterOfAStore: httpapi imports neither cosmos nor
// the Azure SDK nor chi: it reaches the stores through the orders and
// idempotency ports, and the host through handler.
func TestHTTPAPIImportsNoAdapterOfAStore(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{join .Imports "\n"}}`, module+"/httpapi").Output()
	if err != nil {
		t.Fatalf("go list %s/httpapi: %v", module, err)
	}
	imports := strings.Fields(string(out))
	if len(imports) < 5 {
		t.Fatalf("httpapi imports %d packages; the filter lost them", len(imports))
	}
	for _, imp := range imports {
		if imp == module+"/cosmos" || strings.HasPrefix(imp, "github.com/Azure/") || strings.HasPrefix(imp, "github.com/go-chi/") {
			t.Errorf("httpapi imports %s; it reaches stores through their ports and the host through handler", imp)
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

// TestInternalImportsNoAdapterNorBench: no package under internal/ depends
// on cosmos or testbed/: internal holds shared support the adapters import,
// so an arrow back (as internal/cosmostest → cosmos was) would make a
// cycle waiting to happen; test helpers for an adapter live beside it
// (cosmos/cosmostest, as net/http/httptest).
func TestInternalImportsNoAdapterNorBench(t *testing.T) {
	out, err := exec.Command("go", "list", module+"/internal/...").Output()
	if err != nil {
		t.Fatalf("go list %s/internal/...: %v", module, err)
	}
	pkgs := strings.Fields(string(out))
	if len(pkgs) < 5 {
		t.Fatalf("internal/ lists %d packages; the filter lost them", len(pkgs))
	}
	for _, pkg := range pkgs {
		for _, dep := range deps(t, pkg) {
			if dep == module+"/cosmos" || strings.HasPrefix(dep, module+"/cosmos/") || strings.HasPrefix(dep, module+"/testbed/") {
				t.Errorf("%s depends on %s; internal/ must not import an adapter or the bench", pkg, dep)
			}
		}
	}
}
