package funcpack

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Each case is a .funcignore and the paths Core Tools' GitIgnoreParser accepts and denies
// for it (its regex rules, not git's).
func TestIgnoreMatchesCoreTools(t *testing.T) {
	cases := []struct {
		ignore       string
		accept, deny []string
	}{
		{"*.go", []string{"cmd/handler/main.go", "internal/x/y.go", "main.gox"}, []string{"main.go", "doc.go"}},
		{"**/*.go", []string{"main.go"}, []string{"cmd/handler/main.go", "internal/x/y.go"}},
		{"/handler/", []string{"cmd/handler/main.go", "handlerx/a.go"}, []string{"handler/server.go"}},
		{"testdata", []string{"orders/testdata/a.json"}, []string{"testdata/a.json"}},
		{"**/testdata", []string{"testdata/a.json"}, []string{"orders/testdata/a.json"}},
		{"bin/*.exe", []string{"bin/handler", "bin/x/y.exe"}, []string{"bin/handler.exe"}},
		{"cmd", []string{"cmdline.txt"}, []string{"cmd/handler/main.go", "cmd"}},
		{".git*", []string{".git"}, []string{".gitignore", ".github/workflows/ci.yml"}},
		{"# comment\n\n  Makefile  ", []string{"# comment"}, []string{"Makefile"}},
		{"*\n!host.json\n!bin/handler\n!*/function.json", []string{"host.json", "bin/handler", "ProcessOrder/function.json", "bin/handler.exe"},
			[]string{"go.mod", "bin/localrun", "cmd/handler/main.go", "a/b/function.json", ".git"}},
	}
	for _, tc := range cases {
		ig, err := ParseIgnore(tc.ignore)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range tc.accept {
			if !ig.Accepts(p) {
				t.Errorf("%q denies %s; Core Tools accepts it", tc.ignore, p)
			}
		}
		for _, p := range tc.deny {
			if ig.Accepts(p) {
				t.Errorf("%q accepts %s; Core Tools denies it", tc.ignore, p)
			}
		}
	}
}

// The expectations of Core Tools' own GitIgnoreParserTests (test/Cli/Func.UnitTests), against
// the same ignore file: the port must agree with the original on every one of them.
func TestAgreesWithCoreToolsOwnTests(t *testing.T) {
	ignore := strings.Join([]string{
		"# a comment", "/node_modules", "*.log", "", "/nonexistent", "!/nonexistent/foo", "/baz",
		"/foo/*.wat", "/test1", "test2", "/othernonexistent/**/what", "!/othernonexistent/**/what/foo", "*.swp",
	}, "\n")
	ig, err := ParseIgnore(ignore)
	if err != nil {
		t.Fatal(err)
	}
	accepted := []string{"test/index.js", "wat/test/index.js", "/othernonexistent/blah/adsasd/whatads",
		"/othernonexistent/blah/adsasd/what/foo", "test1File.wat", "nonexistent/foo", "nonexistent/foo/wat"}
	denied := []string{"test1", "test.swp", "node_modules/wat.js", "foo/bar.wat", "othernonexistent/blah/what",
		"nonexistent", "nonexistent/bar", "test2"}
	for _, p := range accepted {
		if !ig.Accepts(p) {
			t.Errorf("denies %s; Core Tools' tests expect it accepted", p)
		}
	}
	for _, p := range denied {
		if ig.Accepts(p) {
			t.Errorf("accepts %s; Core Tools' tests expect it denied", p)
		}
	}
	only, _ := ParseIgnore("node_modules")
	for p, want := range map[string]bool{"test/index.js": true, "wat/test/index.js": true, "node_modules": false, "node_modules/foo": false, "node_modules/wat.js": false} {
		if only.Accepts(p) != want {
			t.Errorf("node_modules only: Accepts(%s) = %t, Core Tools' tests expect %t", p, !want, want)
		}
	}
}

func TestCandidatesSkipWhatCoreToolsSkips(t *testing.T) {
	root := t.TempDir()
	for _, f := range []string{"host.json", "local.settings.json", ".funcignore", "a/.gitignore", ".git/config", "x/.vscode/s.json", "x/y.txt"} {
		path := filepath.Join(root, f)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := Candidates(root)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, ",") != "host.json,x/y.txt" {
		t.Fatalf("Candidates = %v, want [host.json x/y.txt]", got)
	}
}
