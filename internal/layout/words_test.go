package layout

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// sameThing lists the exported names both domain packages declare for the
// same thing, and why; any other name declared in both means two things
// under one word (issue 32: one meaning per word).
var sameThing = map[string]string{
	"Fingerprint": "the glossary's fingerprint: orders computes it, idempotency compares a record's with it",
	"Store":       "each package's port to its own records (orders.Store, idempotency.Store), as the Standard package layout names them",
}

// TestDomainPackagesShareNoWord: orders and idempotency declare no exported
// name in common but those of sameThing, so orders.X and idempotency.X never
// mean two things (as Outcome, Result, Mismatch and StoreError once did).
func TestDomainPackagesShareNoWord(t *testing.T) {
	orders := exportedNames(t, filepath.Join("..", "..", "orders"))
	idem := exportedNames(t, filepath.Join("..", "..", "idempotency"))
	if len(orders) < 20 || len(idem) < 10 {
		t.Fatalf("found %d names in orders and %d in idempotency; the parser lost them", len(orders), len(idem))
	}
	for _, name := range shared(orders, idem) {
		if _, ok := sameThing[name]; !ok {
			t.Errorf("orders.%s and idempotency.%s: one word, two things; rename one (glossary: docs/contract.md#words-used-here-and-in-the-code) or, if they are one thing, say so in sameThing", name, name)
		}
	}
	for name := range sameThing {
		if !orders[name] || !idem[name] {
			t.Errorf("sameThing lists %s, which the two packages no longer both declare; drop it", name)
		}
	}
}

// TestSharedFindsADoubleMeaning: the check sees a name declared in both,
// whether as a type, a func, a const or a var, and ignores methods and
// unexported names.
func TestSharedFindsADoubleMeaning(t *testing.T) {
	dir := t.TempDir()
	write := func(name, src string) string {
		d := filepath.Join(dir, name)
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "x.go"), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		return d
	}
	a := write("a", "package a\ntype Outcome int\nconst Mismatch Outcome = 1\nfunc Judge() {}\nvar only = 1\nfunc (Outcome) Result() {}\n")
	b := write("b", "package b\ntype Mismatch struct{}\nvar Outcome = 2\nfunc Result() {}\nfunc only() {}\n")
	got := shared(exportedNames(t, a), exportedNames(t, b))
	if want := []string{"Mismatch", "Outcome"}; !slices.Equal(got, want) {
		t.Errorf("shared %q, want %q", got, want)
	}
}

// exportedNames returns the exported package-level names (types, funcs,
// consts, vars; not methods) declared in dir's non-test files.
func exportedNames(t *testing.T, dir string) map[string]bool {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	fset := token.NewFileSet()
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, filepath.Join(dir, e.Name()), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range file.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil && d.Name.IsExported() {
					names[d.Name.Name] = true
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						if s.Name.IsExported() {
							names[s.Name.Name] = true
						}
					case *ast.ValueSpec:
						for _, n := range s.Names {
							if n.IsExported() {
								names[n.Name] = true
							}
						}
					}
				}
			}
		}
	}
	return names
}

// shared returns the names in both a and b, sorted.
func shared(a, b map[string]bool) []string {
	var both []string
	for n := range a {
		if b[n] {
			both = append(both, n)
		}
	}
	slices.Sort(both)
	return both
}
