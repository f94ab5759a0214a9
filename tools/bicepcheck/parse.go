package bicepcheck

import (
	"fmt"
	"strings"

	bicep "github.com/tree-sitter-grammars/tree-sitter-bicep/bindings/go"
	sitter "github.com/tree-sitter/go-tree-sitter"
)

var language = sitter.NewLanguage(bicep.Language())

// Parse parses one Bicep file into its declarations. Syntax errors do not stop it: they are
// reported in File.Syntax, and the declarations around them are still read.
func Parse(path string, src []byte) (*File, error) {
	parser := sitter.NewParser()
	defer parser.Close()
	if err := parser.SetLanguage(language); err != nil {
		return nil, fmt.Errorf("load the bicep grammar: %w", err)
	}
	tree := parser.Parse(src, nil)
	if tree == nil {
		return nil, fmt.Errorf("parse %s: the parser returned no tree", path)
	}
	defer tree.Close()

	r := reader{src: src, file: &File{Path: path}}
	root := tree.RootNode()
	r.syntaxErrors(root)
	r.declarations(root)
	return r.file, nil
}

type reader struct {
	src     []byte
	file    *File
	parents []string // types of the resources being read, for nested child resources
}

func (r *reader) text(n *sitter.Node) string { return n.Utf8Text(r.src) }

func line(n *sitter.Node) int { return int(n.StartPosition().Row) + 1 }

// syntaxErrors collects ERROR and MISSING nodes, descending only where the subtree has one.
func (r *reader) syntaxErrors(n *sitter.Node) {
	if !n.HasError() && !n.IsMissing() {
		return
	}
	if n.IsError() || n.IsMissing() {
		pos := n.StartPosition()
		what := "unexpected " + strings.Join(strings.Fields(r.text(n)), " ")
		if n.IsMissing() {
			what = "missing " + n.Kind()
		}
		if len(what) > 80 {
			what = what[:80] + "..."
		}
		r.file.Syntax = append(r.file.Syntax, Finding{
			Rule: RuleSyntax, File: r.file.Path, Line: int(pos.Row) + 1,
			Message: fmt.Sprintf("column %d: %s", pos.Column+1, what),
		})
		if n.IsMissing() {
			return
		}
	}
	for i := uint(0); i < n.ChildCount(); i++ {
		r.syntaxErrors(n.Child(i))
	}
}

func (r *reader) declarations(root *sitter.Node) {
	var decorators []string
	for i := uint(0); i < root.NamedChildCount(); i++ {
		n := root.NamedChild(i)
		switch n.Kind() {
		case "decorators":
			for j := uint(0); j < n.NamedChildCount(); j++ {
				decorators = append(decorators, r.text(n.NamedChild(j)))
			}
			continue
		case "comment":
			continue
		case "parameter_declaration":
			p := Param{Name: r.childText(n, "identifier"), Type: r.childText(n, "type"), Decorators: decorators, Line: line(n)}
			if v := lastValueChild(n); v != nil {
				p.Default = r.value(v)
			}
			r.file.Params = append(r.file.Params, p)
		case "variable_declaration":
			if v := lastValueChild(n); v != nil {
				r.file.Vars = append(r.file.Vars, Variable{Name: r.childText(n, "identifier"), Value: r.value(v), Line: line(n)})
			}
		case "output_declaration":
			o := Output{Name: r.childText(n, "identifier"), Type: r.childText(n, "type"), Decorators: decorators, Line: line(n)}
			if v := lastValueChild(n); v != nil {
				o.Value = r.value(v)
			}
			r.file.Outputs = append(r.file.Outputs, o)
		case "resource_declaration":
			r.resource(n)
			r.file.Resources[len(r.file.Resources)-1].Decorators = decorators
		case "module_declaration":
			r.module(n)
		default:
			// import, type, func, metadata, targetScope: walk them for string literals.
			r.walkStrings(n)
		}
		decorators = nil
	}
}

// resource reads a resource declaration. A resource declared inside another one gets the
// full type (parent type + "/" + child type).
func (r *reader) resource(n *sitter.Node) {
	res := Resource{Symbol: r.childText(n, "identifier"), Line: line(n)}
	var body *sitter.Node
	for i := uint(0); i < n.ChildCount(); i++ {
		c := n.Child(i)
		switch c.Kind() {
		case "existing":
			res.Existing = true
		case "string":
			if res.Type == "" {
				typ := r.value(c).Str
				res.Type, res.APIVersion, _ = strings.Cut(typ, "@")
			}
		case "object", "if_statement", "for_statement":
			body = c
		}
	}
	if len(r.parents) > 0 {
		res.Type = r.parents[len(r.parents)-1] + "/" + res.Type
	}
	r.parents = append(r.parents, res.Type)
	defer func() { r.parents = r.parents[:len(r.parents)-1] }()
	for body != nil && body.Kind() != "object" {
		if body.Kind() == "for_statement" {
			res.Loop = true
			body = body.ChildByFieldName("body")
			continue
		}
		body = lastChildOfKind(body, "object", "if_statement")
	}
	if body == nil {
		res.Body = &Value{Kind: KindObject, Line: res.Line}
	} else {
		res.Body = r.value(body)
	}
	r.file.Resources = append(r.file.Resources, res)
}

// module reads a module declaration: its symbol, the file it names and its params object.
func (r *reader) module(n *sitter.Node) {
	m := Module{Symbol: r.childText(n, "identifier"), Line: line(n)}
	var body *sitter.Node
	for i := uint(0); i < n.NamedChildCount(); i++ {
		switch c := n.NamedChild(i); c.Kind() {
		case "string":
			if m.Path == "" {
				m.Path = r.value(c).Str
			}
		case "object", "if_statement", "for_statement":
			body = c
		}
	}
	for body != nil && body.Kind() != "object" {
		if body.Kind() == "for_statement" {
			body = body.ChildByFieldName("body")
			continue
		}
		body = lastChildOfKind(body, "object")
	}
	m.Body = &Value{Kind: KindObject, Line: m.Line}
	if body != nil {
		m.Body = r.value(body)
	}
	r.file.Modules = append(r.file.Modules, m)
}

func (r *reader) childText(n *sitter.Node, kind string) string {
	for i := uint(0); i < n.NamedChildCount(); i++ {
		if c := n.NamedChild(i); c.Kind() == kind {
			return r.text(c)
		}
	}
	return ""
}

// lastValueChild returns the expression of a declaration (`name type = value`): its last named
// child, unless that is the name or the type.
func lastValueChild(n *sitter.Node) *sitter.Node {
	count := n.NamedChildCount()
	if count < 2 {
		return nil
	}
	last := n.NamedChild(count - 1)
	if last.Kind() == "type" || (count == 1 && last.Kind() == "identifier") {
		return nil
	}
	return last
}

func lastChildOfKind(n *sitter.Node, kinds ...string) *sitter.Node {
	for i := int(n.NamedChildCount()) - 1; i >= 0; i-- {
		c := n.NamedChild(uint(i))
		for _, k := range kinds {
			if c.Kind() == k {
				return c
			}
		}
	}
	return nil
}

// value converts an expression node; nested resources found inside objects are read as
// resources too.
func (r *reader) value(n *sitter.Node) *Value {
	v := &Value{Kind: KindExpr, Text: r.text(n), Line: line(n)}
	switch n.Kind() {
	case "string":
		if hasChildOfKind(n, "interpolation") {
			r.walkStrings(n)
			return v
		}
		v.Kind = KindString
		var b strings.Builder
		for i := uint(0); i < n.NamedChildCount(); i++ {
			c := n.NamedChild(i)
			switch c.Kind() {
			case "string_content":
				b.WriteString(r.text(c))
			case "escape_sequence":
				b.WriteString(unescape(r.text(c)))
			}
		}
		v.Str = b.String()
		if n.NamedChildCount() == 0 {
			v.Str = strings.Trim(v.Text, "'")
		}
		r.file.Strings = append(r.file.Strings, v)
	case "number":
		v.Kind = KindNumber
	case "boolean":
		v.Kind = KindBool
	case "null":
		v.Kind = KindNull
	case "object":
		v.Kind = KindObject
		r.file.Objects = append(r.file.Objects, v)
		for i := uint(0); i < n.NamedChildCount(); i++ {
			p := n.NamedChild(i)
			if p.Kind() != "object_property" || p.NamedChildCount() == 0 {
				continue
			}
			key := p.NamedChild(0)
			if key.Kind() == "resource_declaration" {
				r.resource(key)
				continue
			}
			prop := Prop{Key: r.text(key), Line: line(p)}
			if key.Kind() == "string" {
				prop.Key = r.value(key).Str
			}
			if p.NamedChildCount() > 1 {
				prop.Value = r.value(p.NamedChild(p.NamedChildCount() - 1))
				prop.Value.Key = prop.Key
			}
			v.Props = append(v.Props, prop)
		}
	case "array":
		v.Kind = KindArray
		for i := uint(0); i < n.NamedChildCount(); i++ {
			if c := n.NamedChild(i); c.Kind() != "comment" {
				v.Items = append(v.Items, r.value(c))
			}
		}
	case "ternary_expression":
		cond, then, alt := n.ChildByFieldName("condition"), n.ChildByFieldName("consequence"), n.ChildByFieldName("alternative")
		if cond == nil || then == nil || alt == nil {
			r.walkStrings(n)
			return v
		}
		r.walkStrings(cond)
		v.Kind, v.Cond = KindTernary, r.text(cond)
		v.Items = []*Value{r.value(then), r.value(alt)}
	case "parenthesized_expression":
		if n.NamedChildCount() == 1 {
			return r.value(n.NamedChild(0))
		}
		r.walkStrings(n)
	default:
		r.walkStrings(n)
	}
	return v
}

// walkStrings records the literal strings inside an expression the reader does not evaluate.
func (r *reader) walkStrings(n *sitter.Node) {
	if n.Kind() == "call_expression" {
		if fn := n.ChildByFieldName("function"); fn != nil {
			r.file.Calls = append(r.file.Calls, Call{Func: r.text(fn), Line: line(n)})
		}
	}
	for i := uint(0); i < n.NamedChildCount(); i++ {
		c := n.NamedChild(i)
		switch c.Kind() {
		case "string", "object", "array":
			r.value(c)
		case "resource_declaration":
			r.resource(c)
		default:
			r.walkStrings(c)
		}
	}
}

func hasChildOfKind(n *sitter.Node, kind string) bool {
	for i := uint(0); i < n.NamedChildCount(); i++ {
		if n.NamedChild(i).Kind() == kind {
			return true
		}
	}
	return false
}

func unescape(seq string) string {
	switch seq {
	case `\'`:
		return "'"
	case `\\`:
		return `\`
	case `\n`:
		return "\n"
	case `\r`:
		return "\r"
	case `\t`:
		return "\t"
	case `\$`:
		return "$"
	}
	return seq
}
