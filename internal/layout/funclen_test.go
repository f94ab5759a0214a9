package layout

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// maxBenchFunc is the most lines a function of the bench may span, its
// signature and closing brace included (issue 32: a lighter bench).
const maxBenchFunc = 80

// TestBenchFunctionsAreShort: no function under testbed/, tests and
// commands included, spans more than maxBenchFunc lines; a longer one is
// split into named steps.
func TestBenchFunctionsAreShort(t *testing.T) {
	files := 0
	err := filepath.WalkDir("../../testbed", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") {
			return err
		}
		files++
		fset := token.NewFileSet()
		file, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, long := range longFuncs(fset, file, maxBenchFunc) {
			t.Errorf("%s: over %d lines; split it into named steps", long, maxBenchFunc)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 50 {
		t.Fatalf("read %d Go files under testbed/; the walk lost them", files)
	}
}

// longFuncs returns the position, name and length of each function
// declaration of file spanning more than most lines.
func longFuncs(fset *token.FileSet, file *ast.File, most int) []string {
	var found []string
	for _, decl := range file.Decls {
		fn, ok := decl.(*ast.FuncDecl)
		if !ok {
			continue
		}
		start, end := fset.Position(fn.Pos()), fset.Position(fn.End())
		if n := end.Line - start.Line + 1; n > most {
			found = append(found, fmt.Sprintf("%s %s (%d lines)", start, fn.Name.Name, n))
		}
	}
	return found
}

// TestLongFuncsFindsThem: a function one line over the limit is found, one
// at the limit is not.
func TestLongFuncsFindsThem(t *testing.T) {
	body := func(name string, lines int) string {
		return "func " + name + "() {\n" + strings.Repeat("\t_ = 0\n", lines-2) + "}\n"
	}
	src := "package p\n\n" + body("atLimit", 5) + body("over", 6)
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, "p.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := longFuncs(fset, file, 5)
	if len(got) != 1 || !strings.Contains(got[0], "over (6 lines)") {
		t.Fatalf("found %q; want only over (6 lines)", got)
	}
}
