package appconfig

import (
	"bufio"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// HandlerDir and ContractPath are where the handler's settings are read and documented,
// relative to the app root.
const (
	HandlerDir   = "cmd/handler"
	ContractPath = "docs/contract.md"
)

// Setting is one environment setting the handler reads: an `envconfig:"NAME"` struct tag in
// cmd/handler (the tags are the only place the names exist in code), with the default its
// DefaultConfig gives the field.
type Setting struct {
	Name    string
	Type    string // the field's Go type as written: string, int, int64, time.Duration, ...
	Default string // the field's value in DefaultConfig (see defaultValue.text); empty when none
	// DefaultConstant is the Go constant DefaultConfig names for it ("orders.DefaultRetryBudget"),
	// empty when it writes a literal.
	DefaultConstant string
	// DefaultTag is a `default:"..."` tag on the field, which envconfig would apply instead:
	// a second home for the default, which rule settings refuses.
	DefaultTag string
	Required   bool   // `required:"true"`
	Pos        string // file:line of the field
}

// Documented is one row of docs/contract.md §2's table: the names of its first cell and its
// default cell as written.
type Documented struct {
	Names   []string
	Default string
}

// HandlerSettings reads every envconfig tag of the non-test Go files under dir, and the defaults
// of the package's DefaultConfig (handlerDefaults). A folder without Go files is no error (an
// app root without the handler's sources, as in fixtures): nil.
func HandlerSettings(dir string) ([]Setting, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, path := range paths {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, fmt.Errorf("read the handler's settings: %w", err)
		}
		files = append(files, f)
	}
	if len(files) == 0 {
		return nil, nil
	}
	defaults, info, err := handlerDefaults(fset, dir, files)
	if err != nil {
		return nil, fmt.Errorf("read the handler's defaults: %w", err)
	}
	var out []Setting
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			field, ok := n.(*ast.Field)
			if !ok || field.Tag == nil {
				return true
			}
			raw, err := strconv.Unquote(field.Tag.Value)
			if err != nil {
				return true
			}
			tag := reflect.StructTag(raw)
			name, ok := tag.Lookup("envconfig")
			if !ok || name == "" || name == "-" {
				return true
			}
			s := Setting{
				Name:       name,
				Type:       exprString(field.Type),
				DefaultTag: tag.Get("default"),
				Required:   tag.Get("required") == "true",
				Pos:        fset.Position(field.Pos()).String(),
			}
			if d, ok := defaults[info.Defs[field.Names[0]]]; ok && len(field.Names) == 1 {
				s.Default, s.DefaultConstant = d.text(s.Type), d.named
			}
			out = append(out, s)
			return true
		})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func exprString(e ast.Expr) string {
	switch t := e.(type) {
	case *ast.Ident:
		return t.Name
	case *ast.SelectorExpr:
		return exprString(t.X) + "." + t.Sel.Name
	case *ast.StarExpr:
		return "*" + exprString(t.X)
	}
	return fmt.Sprintf("%T", e)
}

var backticked = regexp.MustCompile("`([^`]+)`")

// ContractSettings reads the table of "## 2." in the contract: one Documented per row. A
// missing file is no error: nil.
func ContractSettings(path string) ([]Documented, error) {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []Documented
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "## ") {
			in = strings.HasPrefix(line, "## 2.")
			continue
		}
		if !in || !strings.HasPrefix(line, "| `") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "| "), " | ")
		row := Documented{Default: strings.TrimSpace(cells[len(cells)-1])}
		for _, m := range backticked.FindAllStringSubmatch(cells[0], -1) {
			row.Names = append(row.Names, m[1])
		}
		out = append(out, row)
	}
	return out, sc.Err()
}

// DocumentedDefault returns the default a contract cell states: the backticked value it
// starts with ("`4m`", "`262144` (Standard)"), "required", or "" when the cell says something
// else ("unset", "from `host.json`").
func (d Documented) DocumentedDefault() string {
	if d.Default == "required" {
		return d.Default
	}
	if m := backticked.FindStringSubmatchIndex(d.Default); m != nil && m[0] == 0 {
		return d.Default[m[2]:m[3]]
	}
	return ""
}

// settings checks that the code and the contract name the same settings with the same
// defaults: a setting the handler reads is documented in docs/contract.md §2, and a documented
// one is read.
func (c *checker) settings() {
	if c.app.Handler == nil || c.app.Contract == nil {
		return // an app root without the handler's sources or the contract (fixtures)
	}
	contract := filepath.Join(c.app.Root, ContractPath)
	documented := map[string]Documented{}
	for _, row := range c.app.Contract {
		for _, name := range row.Names {
			documented[name] = row
		}
	}
	read := map[string]bool{}
	for _, s := range c.app.Handler {
		read[s.Name] = true
		row, ok := documented[s.Name]
		if !ok {
			c.addf(RuleSettings, contract, "%s (read by %s) is not in the table of §2", s.Name, s.Pos)
			continue
		}
		if s.DefaultTag != "" {
			c.addf(RuleSettings, s.Pos, "%s has the envconfig tag default:%q: state its default in %s only", s.Name, s.DefaultTag, defaultsFunc)
		}
		want := s.Default
		if s.Required {
			want = "required"
		}
		if got := row.DocumentedDefault(); got != "" && got != want && (s.Required || !s.Means(got)) {
			c.addf(RuleSettings, contract, "§2 gives %s the default %q, the handler %q (%s)", s.Name, got, want, s.Pos)
		}
	}
	for _, name := range sortedKeys(setOf(documented)) {
		if !read[name] {
			c.addf(RuleSettings, contract, "§2 documents %s, which no envconfig tag under %s reads", name, HandlerDir)
		}
	}
}

func setOf[V any](m map[string]V) map[string]bool {
	out := make(map[string]bool, len(m))
	for k := range m {
		out[k] = true
	}
	return out
}

// HandlerSetting returns the setting of that name the handler reads, or nil.
func (a *App) HandlerSetting(name string) *Setting {
	for i := range a.Handler {
		if a.Handler[i].Name == name {
			return &a.Handler[i]
		}
	}
	return nil
}

// IsDocumented reports whether docs/contract.md §2 lists the setting.
func (a *App) IsDocumented(name string) bool {
	for _, row := range a.Contract {
		for _, n := range row.Names {
			if n == name {
				return true
			}
		}
	}
	return false
}
