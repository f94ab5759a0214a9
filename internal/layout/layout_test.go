// Package layout holds tests of where code lives: the test bench stays out
// of the product packages (docs/contract.md keeps the product's promises;
// internal/cosmostest, orders/orderstest, idempotency/idemtest,
// handler/handlertest and testbed/ hold what only tests and the bench use),
// and each of the HTTP API's statuses is decided in one file.
package layout

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

const module = "github.com/ordersink/orders-consumer"

// testOnly matches a doc comment that says its name serves tests.
var testOnly = regexp.MustCompile(`(?i)\b(for\s+tests|for\s+testing|tests?\s+use|used\s+by\s+tests|tests?\s+only|test-only|only\s+(by|for)\s+tests|and\s+tests)\b`)

// TestProductExportsNothingForTests: no product package exports a name
// documented as being for tests; such a helper belongs in a test package
// (internal/cosmostest, orderstest, idemtest) or the bench (testbed/).
func TestProductExportsNothingForTests(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}|{{.Dir}}|{{join .GoFiles ","}}`, module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	scanned := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		parts := strings.Split(line, "|")
		if len(parts) != 3 {
			t.Fatalf("go list line %q: want path|dir|files", line)
		}
		path, dir, files := parts[0], parts[1], parts[2]
		if !isProduct(path) || files == "" {
			continue
		}
		scanned++
		fset := token.NewFileSet()
		for _, f := range strings.Split(files, ",") {
			file, err := parser.ParseFile(fset, filepath.Join(dir, f), nil, parser.ParseComments)
			if err != nil {
				t.Fatal(err)
			}
			for _, where := range testOnlyExports(fset, file) {
				t.Errorf("%s: exported for tests; move it to a test package or testbed/", where)
			}
		}
	}
	if scanned < 5 {
		t.Fatalf("scanned %d product packages; the filter lost them", scanned)
	}
}

// isProduct reports whether a package is the product's: not the bench, the
// tools, a test package (…test) or this one.
func isProduct(path string) bool {
	rel := strings.TrimPrefix(path, module+"/")
	switch {
	case strings.HasPrefix(rel, "testbed/"), strings.HasPrefix(rel, "tools/"),
		strings.HasSuffix(rel, "test"), rel == "internal/doclinks", rel == "internal/layout":
		return false
	}
	return true
}

// testOnlyExports returns the positions of the exported declarations of
// file whose doc comment says they are for tests.
func testOnlyExports(fset *token.FileSet, file *ast.File) []string {
	var found []string
	check := func(name *ast.Ident, doc *ast.CommentGroup) {
		if name.IsExported() && doc != nil && testOnly.MatchString(doc.Text()) {
			found = append(found, fset.Position(name.Pos()).String()+" "+name.Name)
		}
	}
	for _, d := range file.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			check(d.Name, d.Doc)
		case *ast.GenDecl:
			for _, s := range d.Specs {
				doc := d.Doc
				switch s := s.(type) {
				case *ast.TypeSpec:
					if s.Doc != nil {
						doc = s.Doc
					}
					check(s.Name, doc)
				case *ast.ValueSpec:
					if s.Doc != nil {
						doc = s.Doc
					}
					for _, n := range s.Names {
						check(n, doc)
					}
				}
			}
		}
	}
	return found
}

// TestTestOnlyExportsFindsThem: the scan finds an exported helper documented
// for tests, and passes over unexported ones and product words.
func TestTestOnlyExportsFindsThem(t *testing.T) {
	src := `package p

// DeleteDatabase removes the database; tests use it to clean up.
func DeleteDatabase() {}

// Documents returns every document. For tests and local checks.
func (s *Store) Documents() {}

// Store keeps orders.
type Store struct{}

// helper is for tests.
func helper() {}

// Read returns the order a caller asked for.
func Read() {}
`
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, "p.go", src, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	got := testOnlyExports(fset, file)
	if len(got) != 2 || !strings.HasSuffix(got[0], "DeleteDatabase") || !strings.HasSuffix(got[1], "Documents") {
		t.Fatalf("found %q; want DeleteDatabase and Documents", got)
	}
}

// TestMutateCoversTheDeployedHandler: make mutate has a floor for every
// package the deployed handler is built from (scripts/mutate.sh), so a new
// package does not slip past mutation testing.
func TestMutateCoversTheDeployedHandler(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", module+"/cmd/handler").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	script, err := os.ReadFile(filepath.Join("..", "..", "scripts", "mutate.sh"))
	if err != nil {
		t.Fatal(err)
	}
	floors := map[string]bool{}
	for _, m := range regexp.MustCompile(`\[([a-z/]+)\]=[0-9]+`).FindAllStringSubmatch(string(script), -1) {
		floors[m[1]] = true
	}
	deps := 0
	for _, path := range strings.Fields(string(out)) {
		rel, ok := strings.CutPrefix(path, module+"/")
		if !ok {
			continue
		}
		deps++
		if !floors[rel] {
			t.Errorf("%s is built into the handler but has no floor in scripts/mutate.sh", rel)
		}
	}
	if deps < 5 {
		t.Fatalf("the handler is built from %d project packages; the filter lost them", deps)
	}
}

// TestHTTPAPIStatusesAreDecidedInAnswers: every HTTP status the HTTP API
// answers is named in httpapi/answers.go, so that "where is status X
// decided" has a one-file answer; the flows name problem types and
// answers, never a status.
func TestHTTPAPIStatusesAreDecidedInAnswers(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "httpapi", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	inAnswers := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		for _, where := range statusNames(t, f) {
			if filepath.Base(f) == "answers.go" {
				inAnswers++
				continue
			}
			t.Errorf("%s: a status of the HTTP API is decided in httpapi/answers.go", where)
		}
	}
	if inAnswers < 10 {
		t.Fatalf("httpapi/answers.go names %d statuses; the scan lost them", inAnswers)
	}
}

// statusNames returns where the Go file names a net/http status constant
// (http.StatusNotFound), with the name.
func statusNames(t *testing.T, path string) []string {
	t.Helper()
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, path, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	ast.Inspect(file, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if pkg, ok := sel.X.(*ast.Ident); ok && pkg.Name == "http" && strings.HasPrefix(sel.Sel.Name, "Status") {
				found = append(found, fset.Position(sel.Pos()).String()+" http."+sel.Sel.Name)
			}
		}
		return true
	})
	return found
}
