package bicepcheck

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
)

// bodyRefTargets reads the handler's Go sources (dir) and wants every BodyRef literal, the
// pointer a parking envelope carries instead of a body too large for it, to name a parked body:
// its id taken from the ID() of an orders.NewParkedBody result built in the same function. Only
// those documents carry orders.ParkedBodyTTL, which parkedLifetime holds against the parking
// queue; any other document of the orders container may expire (an outbox event after
// orders.OutboxEventTTL) while the envelope that points at it never does (ADR 0013).
func bodyRefTargets(dir string) []Finding {
	paths, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil || len(paths) == 0 {
		return []Finding{{Rule: RuleParkedLifetime, File: dir, Line: 1, Message: fmt.Sprintf("no Go sources of the handler in %s (%v): what a parking envelope's bodyRef names is unknown", dir, err)}}
	}
	var out []Finding
	refs := 0
	fset := token.NewFileSet()
	for _, path := range paths {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return append(out, Finding{Rule: RuleParkedLifetime, File: path, Line: 1, Message: err.Error()})
		}
		f, err := parser.ParseFile(fset, path, src, 0)
		if err != nil {
			return append(out, Finding{Rule: RuleParkedLifetime, File: path, Line: 1, Message: fmt.Sprintf("not Go: %v", err)})
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			parked := parkedBodyVars(fn.Body)
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				lit, ok := n.(*ast.CompositeLit)
				if !ok || !isIdent(lit.Type, "BodyRef") {
					return true
				}
				refs++
				if id := fieldValue(lit, "ID"); !namesParkedBody(id, parked) {
					out = append(out, Finding{Rule: RuleParkedLifetime, File: path, Line: fset.Position(lit.Pos()).Line,
						Message: fmt.Sprintf("an envelope could outlive its body: %s builds a bodyRef whose id is %s, not the ID() of an orders.NewParkedBody it keeps; only parked bodies never expire (orders.ParkedBodyTTL), any other document (an outbox event: orders.OutboxEventTTL) may vanish while its envelope waits", fn.Name.Name, exprText(src, fset, id))})
				}
				return true
			})
		}
	}
	if refs == 0 && out == nil {
		out = append(out, Finding{Rule: RuleParkedLifetime, File: dir, Line: 1, Message: "no BodyRef literal in the handler's sources: the rule no longer sees what an envelope's bodyRef names"})
	}
	return out
}

// parkedBodyVars are the names a function assigns from orders.NewParkedBody.
func parkedBodyVars(body *ast.BlockStmt) map[string]bool {
	vars := map[string]bool{}
	ast.Inspect(body, func(n ast.Node) bool {
		as, ok := n.(*ast.AssignStmt)
		if !ok || len(as.Lhs) != 1 || len(as.Rhs) != 1 {
			return true
		}
		call, ok := as.Rhs[0].(*ast.CallExpr)
		if !ok {
			return true
		}
		if sel, ok := call.Fun.(*ast.SelectorExpr); ok && isIdent(sel.X, "orders") && sel.Sel.Name == "NewParkedBody" {
			if id, ok := as.Lhs[0].(*ast.Ident); ok {
				vars[id.Name] = true
			}
		}
		return true
	})
	return vars
}

// namesParkedBody: e is v.ID() for a v from orders.NewParkedBody.
func namesParkedBody(e ast.Expr, parked map[string]bool) bool {
	call, ok := e.(*ast.CallExpr)
	if !ok || len(call.Args) != 0 {
		return false
	}
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != "ID" {
		return false
	}
	v, ok := sel.X.(*ast.Ident)
	return ok && parked[v.Name]
}

func fieldValue(lit *ast.CompositeLit, name string) ast.Expr {
	for _, el := range lit.Elts {
		if kv, ok := el.(*ast.KeyValueExpr); ok && isIdent(kv.Key, name) {
			return kv.Value
		}
	}
	return nil
}

func isIdent(e ast.Expr, name string) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == name
}

func exprText(src []byte, fset *token.FileSet, e ast.Expr) string {
	if e == nil {
		return "not set"
	}
	return string(src[fset.Position(e.Pos()).Offset:fset.Position(e.End()).Offset])
}
