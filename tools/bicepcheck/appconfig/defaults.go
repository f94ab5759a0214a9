package appconfig

import (
	"bufio"
	"bytes"
	"fmt"
	"go/ast"
	"go/constant"
	"go/importer"
	"go/token"
	"go/types"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"
)

// defaultsFunc is the function of the handler's package that states every default once, most of
// them as Go constants of the packages beside it (cmd/handler's DefaultConfig).
const defaultsFunc = "DefaultConfig"

// handlerDefaults type-checks the handler's package and evaluates the struct literal that
// defaultsFunc returns, as the compiler does: each field it sets, nested literals included, with
// its constant value, and the constant it names ("orders.DefaultRetryBudget") when it names one.
// So the checks compare the app's settings with what the handler runs with, and no table of
// constants is kept in step with it by hand.
func handlerDefaults(fset *token.FileSet, dir string, files []*ast.File) (map[types.Object]defaultValue, *types.Info, error) {
	imports, err := exportData(dir)
	if err != nil {
		return nil, nil, err
	}
	info := &types.Info{Types: map[ast.Expr]types.TypeAndValue{}, Defs: map[*ast.Ident]types.Object{}, Uses: map[*ast.Ident]types.Object{}}
	conf := types.Config{Importer: importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		if f, ok := imports[path]; ok {
			return os.Open(f)
		}
		return nil, fmt.Errorf("no export data for %s", path)
	})}
	if _, err := conf.Check("main", fset, files, info); err != nil {
		return nil, nil, fmt.Errorf("type-check %s: %w", dir, err)
	}
	out := map[types.Object]defaultValue{}
	for _, f := range files {
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv != nil || fn.Name.Name != defaultsFunc || fn.Body == nil {
				continue
			}
			for _, st := range fn.Body.List {
				if ret, ok := st.(*ast.ReturnStmt); ok && len(ret.Results) == 1 {
					if lit, ok := ret.Results[0].(*ast.CompositeLit); ok {
						if err := readLiteral(fset, info, lit, out); err != nil {
							return nil, nil, err
						}
					}
				}
			}
		}
	}
	return out, info, nil
}

// defaultValue is one field's default: its constant value, and the constant it names, if any.
type defaultValue struct {
	value constant.Value
	named string
}

func readLiteral(fset *token.FileSet, info *types.Info, lit *ast.CompositeLit, out map[types.Object]defaultValue) error {
	for _, el := range lit.Elts {
		kv, ok := el.(*ast.KeyValueExpr)
		if !ok {
			return fmt.Errorf("%s: %s sets a field without its name", fset.Position(el.Pos()), defaultsFunc)
		}
		key, _ := kv.Key.(*ast.Ident)
		field := info.Uses[key]
		if inner, ok := kv.Value.(*ast.CompositeLit); ok {
			if err := readLiteral(fset, info, inner, out); err != nil {
				return err
			}
			continue
		}
		tv := info.Types[kv.Value]
		if field == nil || tv.Value == nil {
			return fmt.Errorf("%s: %s gives %s a value that is not a constant; the checks cannot read it", fset.Position(kv.Pos()), defaultsFunc, exprString(kv.Key))
		}
		out[field] = defaultValue{value: tv.Value, named: constantNamed(info, kv.Value)}
	}
	return nil
}

// constantNamed is "pkg.Name" when e is, or converts, a constant declared by name.
func constantNamed(info *types.Info, e ast.Expr) string {
	switch x := e.(type) {
	case *ast.CallExpr: // a conversion: logLevel(slog.LevelInfo)
		if len(x.Args) == 1 {
			return constantNamed(info, x.Args[0])
		}
	case *ast.SelectorExpr:
		if c, ok := info.Uses[x.Sel].(*types.Const); ok {
			return c.Pkg().Name() + "." + c.Name()
		}
	case *ast.Ident:
		if c, ok := info.Uses[x].(*types.Const); ok {
			return c.Name()
		}
	}
	return ""
}

// text is a default as a setting would say it: a duration as Go prints it, a log level by the name
// LOG_LEVEL takes, a number in decimal, a string as is.
func (d defaultValue) text(goType string) string {
	switch {
	case d.value.Kind() == constant.String:
		return constant.StringVal(d.value)
	case goType == "time.Duration":
		n, _ := constant.Int64Val(d.value)
		return time.Duration(n).String()
	case goType == "logLevel":
		n, _ := constant.Int64Val(d.value)
		return strings.ToLower(slog.Level(n).String())
	}
	return d.value.ExactString()
}

// Means reports whether text, read as the handler reads this setting, is its default: 60s is
// 1m, "INFO" is info.
func (s Setting) Means(text string) bool {
	switch s.Type {
	case "time.Duration":
		a, errA := time.ParseDuration(text)
		b, errB := time.ParseDuration(s.Default)
		return errA == nil && errB == nil && a == b
	case "int", "int64":
		a, errA := strconv.ParseInt(text, 10, 64)
		b, errB := strconv.ParseInt(s.Default, 10, 64)
		return errA == nil && errB == nil && a == b
	case "logLevel":
		return strings.EqualFold(text, s.Default)
	}
	return text == s.Default
}

var (
	exportMu    sync.Mutex
	exportCache = map[string]map[string]string{}
)

// exportData maps every package the package in dir depends on to its export data file, built by
// `go list -export` into the build cache (once per dir and process).
func exportData(dir string) (map[string]string, error) {
	exportMu.Lock()
	defer exportMu.Unlock()
	if m, ok := exportCache[dir]; ok {
		return m, nil
	}
	cmd := exec.Command("go", "list", "-export", "-deps", "-f", "{{.ImportPath}}\t{{.Export}}", ".")
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list -export in %s: %v: %s", dir, err, strings.TrimSpace(stderr.String()))
	}
	m := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if path, file, ok := strings.Cut(sc.Text(), "\t"); ok && file != "" {
			m[path] = file
		}
	}
	exportCache[dir] = m
	return m, nil
}
