package doclinks

import (
	"bufio"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// patternsPage is where the patterns are listed, relative to the repository root.
const patternsPage = "docs/design-patterns.md"

var (
	// patternComment is the one form a Pattern: comment takes: the entry's
	// heading and its anchor in patternsPage.
	patternComment = regexp.MustCompile(`^// Pattern: (.+) \(docs/design-patterns\.md#([^)\s]+)\)\.$`)
	// codeIdent is an identifier as an entry's Code line names it: a package
	// directory relative to the repository root, then a top-level name or
	// Type.Method (cosmos.Store.CreateOrder, orders/orderstest.TestStore).
	codeIdent = regexp.MustCompile(`^[a-z][a-z0-9_]*(?:/[a-z][a-z0-9_]*)*\.[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)?$`)
)

// patternEntry is one "## " section of patternsPage.
type patternEntry struct {
	name  string   // the heading as written
	line  int      // of the heading
	code  []string // the identifiers of its "- Code:" line
	named bool     // a Pattern: comment names it
}

// patternCheck is what checkPatterns looked at, for a test to tell a
// check that passed from one that found nothing to check.
type patternCheck struct {
	entries, comments int
	problems          []string
}

// checkPatterns checks the Pattern: comments of the Go files under root
// against the entries of root's patternsPage, in both directions: every
// comment names an entry, in the convention's form, as the last line of
// the doc comment of a type or function the entry's Code line lists; every
// entry is named by at least one comment; every identifier a Code line
// lists exists.
func checkPatterns(root string) patternCheck {
	var c patternCheck
	entries, problems := readPatternEntries(filepath.Join(root, filepath.FromSlash(patternsPage)))
	c.problems = problems
	c.entries = len(entries)
	err := walkFiles(root, ".go", func(path string) error {
		n, problems := checkPatternComments(root, path, entries)
		c.comments += n
		c.problems = append(c.problems, problems...)
		return nil
	})
	if err != nil {
		c.problems = append(c.problems, fmt.Sprintf("walk %s: %v", root, err))
	}
	decls := map[string]map[string]bool{} // package directory → its top-level names
	for _, anchor := range slices.Sorted(maps.Keys(entries)) {
		e := entries[anchor]
		if !e.named {
			c.problems = append(c.problems, fmt.Sprintf("%s:%d: entry %q has no Pattern: comment in the code: end the doc comment of what it names with // Pattern: %s (%s#%s).", patternsPage, e.line, e.name, e.name, patternsPage, anchor))
		}
		for _, id := range e.code {
			dir, name, _ := strings.Cut(id[strings.LastIndex(id, "/")+1:], ".")
			dir = id[:strings.LastIndex(id, "/")+1] + dir
			if decls[dir] == nil {
				decls[dir] = packageDecls(filepath.Join(root, filepath.FromSlash(dir)))
			}
			if !decls[dir][name] {
				c.problems = append(c.problems, fmt.Sprintf("%s:%d: entry %q names %s, which package %s does not declare", patternsPage, e.line, e.name, id, dir))
			}
		}
	}
	return c
}

// readPatternEntries returns the entries of the patterns page by anchor.
func readPatternEntries(path string) (map[string]*patternEntry, []string) {
	f, err := os.Open(path)
	if err != nil {
		return nil, []string{fmt.Sprintf("read the patterns page: %v", err)}
	}
	defer f.Close()
	var problems []string
	entries := map[string]*patternEntry{}
	var cur *patternEntry
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if name, ok := strings.CutPrefix(line, "## "); ok {
			name = strings.TrimSpace(name)
			anchor := slug(name)
			if entries[anchor] != nil {
				problems = append(problems, fmt.Sprintf("%s:%d: a second entry with anchor #%s", patternsPage, n, anchor))
			}
			cur = &patternEntry{name: name, line: n}
			entries[anchor] = cur
			continue
		}
		rest, ok := strings.CutPrefix(line, "- Code:")
		if !ok || cur == nil {
			continue
		}
		for _, span := range codeSpan.FindAllString(rest, -1) {
			if id := strings.Trim(span, "`"); codeIdent.MatchString(id) {
				cur.code = append(cur.code, id)
			}
		}
	}
	if err := sc.Err(); err != nil {
		problems = append(problems, fmt.Sprintf("read %s: %v", patternsPage, err))
	}
	for _, e := range entries {
		if len(e.code) == 0 {
			problems = append(problems, fmt.Sprintf("%s:%d: entry %q has no \"- Code:\" line naming an identifier such as `package.Name`", patternsPage, e.line, e.name))
		}
	}
	return entries, problems
}

// checkPatternComments checks the Pattern: comments of one Go file and
// marks the entries they name. It returns how many it found.
func checkPatternComments(root, path string, entries map[string]*patternEntry) (int, []string) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return 0, []string{fmt.Sprintf("parse %s: %v", path, err)}
	}
	rel, _ := filepath.Rel(root, filepath.Dir(path))
	dir := filepath.ToSlash(rel)
	owners := docOwners(f)
	var problems []string
	found := 0
	for _, cg := range f.Comments {
		for i, c := range cg.List {
			if !strings.HasPrefix(strings.TrimLeft(strings.TrimPrefix(c.Text, "//"), " \t"), "Pattern:") {
				continue
			}
			found++
			at := fset.Position(c.Pos())
			at.Filename, _ = filepath.Rel(root, at.Filename)
			problem := func(format string, args ...any) {
				problems = append(problems, fmt.Sprintf("%s:%d: ", filepath.ToSlash(at.Filename), at.Line)+fmt.Sprintf(format, args...))
			}
			m := patternComment.FindStringSubmatch(c.Text)
			owner, onDecl := owners[cg]
			var e *patternEntry
			if m != nil {
				e = entries[m[2]]
			}
			switch {
			case m == nil:
				problem("%q is not of the form // Pattern: <entry> (%s#<anchor>).", c.Text, patternsPage)
			case e == nil:
				problem("Pattern: %s names #%s, which is no entry of %s", m[1], m[2], patternsPage)
			case m[1] != e.name:
				problem("Pattern: %s links #%s, whose entry is %q", m[1], m[2], e.name)
			case !onDecl:
				problem("Pattern: %s is not in the doc comment of a type or function", m[1])
			case i != len(cg.List)-1:
				problem("Pattern: %s is not the last line of %s's doc comment", m[1], owner)
			case !slices.Contains(e.code, dir+"."+owner):
				problem("Pattern: %s is on %s.%s, which the entry's Code line does not list", m[1], dir, owner)
			default:
				e.named = true
			}
		}
	}
	return found, problems
}

// docOwners maps the doc comments of f's types and functions to what they
// document: Name, or Type.Method for a method.
func docOwners(f *ast.File) map[*ast.CommentGroup]string {
	owners := map[*ast.CommentGroup]string{}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Doc != nil {
				owners[d.Doc] = funcName(d)
			}
		case *ast.GenDecl:
			if d.Tok != token.TYPE {
				continue
			}
			for _, s := range d.Specs {
				ts := s.(*ast.TypeSpec)
				if ts.Doc != nil {
					owners[ts.Doc] = ts.Name.Name
				}
				if d.Doc != nil && len(d.Specs) == 1 {
					owners[d.Doc] = ts.Name.Name
				}
			}
		}
	}
	return owners
}

// packageDecls returns the top-level names the non-test Go files of dir
// declare, methods as Type.Method.
func packageDecls(dir string) map[string]bool {
	names := map[string]bool{}
	files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	fset := token.NewFileSet()
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			continue // checkPatternComments reports it
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				names[funcName(d)] = true
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						names[s.Name.Name] = true
					case *ast.ValueSpec:
						for _, n := range s.Names {
							names[n.Name] = true
						}
					}
				}
			}
		}
	}
	return names
}

// funcName is a function's name, or Type.Method for a method.
func funcName(d *ast.FuncDecl) string {
	if d.Recv == nil || len(d.Recv.List) == 0 {
		return d.Name.Name
	}
	t := d.Recv.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	switch x := t.(type) {
	case *ast.IndexExpr:
		t = x.X
	case *ast.IndexListExpr:
		t = x.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name + "." + d.Name.Name
	}
	return d.Name.Name
}

func TestPatternsNamedWhereTheyLive(t *testing.T) {
	c := checkPatterns(repoRoot)
	for _, p := range c.problems {
		t.Error(p)
	}
	if c.entries == 0 || c.comments == 0 {
		t.Fatalf("%d entries in %s, %d Pattern: comments in the code: the scan is broken", c.entries, patternsPage, c.comments)
	}
	t.Logf("%d entries of %s, %d Pattern: comments", c.entries, patternsPage, c.comments)
}

// TestPatternCheckFails runs the check over small repositories, each broken
// in one way, so a check that passes everything cannot hide.
func TestPatternCheckFails(t *testing.T) {
	const page = "# Patterns\n\n## Read-through cache\n\n- Code: `shop.Cache`, `shop.Cache.Get`\n- Why: x\n"
	const cache = "// Cache keeps what was read.\n// Pattern: Read-through cache (docs/design-patterns.md#read-through-cache).\ntype Cache struct{}\n"
	const get = "\n// Get reads through.\nfunc (c *Cache) Get() {}\n"
	for _, tc := range []struct {
		name, page, code string
		want             string // in a problem; "" for none
	}{
		{"consistent", page, cache + get, ""},
		{"consistent, on a method", page, "type Cache struct{}\n" + strings.Replace(get, "through.\n", "through.\n// Pattern: Read-through cache (docs/design-patterns.md#read-through-cache).\n", 1), ""},
		{"comment names a missing entry", page, cache + get +
			"\n// Sale is one.\n// Pattern: Sale (docs/design-patterns.md#sale).\ntype Sale struct{}\n", "which is no entry"},
		{"entry named by no comment", page, "// Cache keeps what was read.\ntype Cache struct{}\n" + get, "has no Pattern: comment"},
		{"Code line names a missing identifier", strings.Replace(page, "`shop.Cache.Get`", "`shop.Cache.Put`", 1), cache + get, "shop.Cache.Put, which package shop does not declare"},
		{"entry without a Code line", page + "\n## Lazy load\n\n- Why: y\n", cache + get, `entry "Lazy load" has no "- Code:" line`},
		{"comment on a declaration its entry does not list", page, cache + get +
			"\n// Sale is one.\n// Pattern: Read-through cache (docs/design-patterns.md#read-through-cache).\ntype Sale struct{}\n", "on shop.Sale, which the entry's Code line does not list"},
		{"comment not the doc comment's last line", page, strings.Replace(cache, "type", "// More.\ntype", 1) + get, "not the last line"},
		{"comment inside a function", page, cache + "\nfunc f() {\n\t// Pattern: Read-through cache (docs/design-patterns.md#read-through-cache).\n}\n", "not in the doc comment of a type or function"},
		{"comment names another entry than it links", page, strings.Replace(cache, "Pattern: Read-through cache", "Pattern: Cache", 1) + get, `whose entry is "Read-through cache"`},
		{"comment in another form", page, cache + get + "\n// Pattern: see the docs.\ntype Sale struct{}\n", "is not of the form"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			write(t, filepath.Join(root, "docs", "design-patterns.md"), tc.page)
			write(t, filepath.Join(root, "shop", "shop.go"), "package shop\n\n"+tc.code)
			c := checkPatterns(root)
			if tc.want == "" {
				for _, p := range c.problems {
					t.Errorf("unexpected problem: %s", p)
				}
				if c.entries != 1 || c.comments != 1 {
					t.Errorf("checked %d entries and %d comments, want 1 and 1", c.entries, c.comments)
				}
				return
			}
			if !slices.ContainsFunc(c.problems, func(p string) bool { return strings.Contains(p, tc.want) }) {
				t.Errorf("problems %q, want one containing %q", c.problems, tc.want)
			}
		})
	}
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
