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
			[]string{"go.mod", "bin/hostemu", "cmd/handler/main.go", "a/b/function.json", ".git"}},
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
