// Package bicepcheck checks the project's Bicep files without a Bicep compiler: every file must
// parse with the tree-sitter-bicep 1.1.0 grammar, and the parsed declarations must pass the
// project's policy rules (rules.go). It cannot check types, property names, API versions or
// scopes; only `bicep build` and an ARM what-if can (docs/deploy.md).
package bicepcheck

import (
	"strings"
)

// Kind is the shape of a Bicep value as far as the rules need it.
type Kind int

// The kinds of Value. KindExpr is anything the rules do not evaluate: references, calls,
// ternaries, interpolated strings.
const (
	KindExpr Kind = iota
	KindString
	KindNumber
	KindBool
	KindNull
	KindObject
	KindArray
	KindTernary // cond ? Items[0] : Items[1]; Cond is the condition's source text
)

// Value is a Bicep expression reduced to literals, objects and arrays. Text is always the
// source text, so a rule can still look inside an expression it does not evaluate.
type Value struct {
	Kind  Kind
	Text  string
	Str   string // the content of a literal string without interpolation
	Cond  string // KindTernary only
	Props []Prop
	Items []*Value
	Key   string // the object key this value is assigned to, if any
	Line  int    // 1-based
}

// Prop is one property of a Bicep object.
type Prop struct {
	Key   string
	Value *Value
	Line  int
}

// Get follows object keys (compared case-insensitively, as ARM does) and returns nil when a
// key is missing or a step is not an object.
func (v *Value) Get(path ...string) *Value {
	cur := v
	for _, key := range path {
		if cur == nil || cur.Kind != KindObject {
			return nil
		}
		var next *Value
		for _, p := range cur.Props {
			if strings.EqualFold(p.Key, key) {
				next = p.Value
				break
			}
		}
		cur = next
	}
	return cur
}

// IsBool reports whether v is the literal b.
func (v *Value) IsBool(b bool) bool {
	if v == nil || v.Kind != KindBool {
		return false
	}
	return v.Text == map[bool]string{true: "true", false: "false"}[b]
}

// Resource is one resource declaration, nested child resources included (their Type is the
// full type, parent type + "/" + child type).
type Resource struct {
	Symbol     string
	Type       string // e.g. Microsoft.ServiceBus/namespaces/queues
	APIVersion string
	Existing   bool
	Loop       bool // declared with a for expression
	Body       *Value
	Decorators []string // e.g. @batchSize(1), top-level declarations only
	Line       int
}

// Name is the literal name of the resource, resolved through params and variables of the
// same file; empty when it is computed.
func (r Resource) Name(f *File) string {
	return f.Literal(r.Body.Get("name"))
}

// Module is one module declaration: Path is the referenced file as written (relative to the
// declaring file), Body the declaration's object (name, params, ...).
type Module struct {
	Symbol string
	Path   string
	Body   *Value
	Line   int
}

// Output is one output declaration.
type Output struct {
	Name       string
	Type       string
	Value      *Value
	Decorators []string
	Line       int
}

// Variable is one variable declaration.
type Variable struct {
	Name  string
	Value *Value
	Line  int
}

// Param is one parameter declaration; Default is nil without a default value.
type Param struct {
	Name       string
	Type       string
	Default    *Value
	Decorators []string // e.g. @minValue(1), @allowed([...]) as written
	Line       int
}

// File is one parsed Bicep file.
type File struct {
	Path      string
	Resources []Resource
	Modules   []Module
	Outputs   []Output
	Vars      []Variable
	Params    []Param
	Strings   []*Value // every literal string in the file, in source order
	Calls     []Call   // every function call, in source order
	Objects   []*Value // every object literal in the file, nested ones included, in source order
	Syntax    []Finding
}

// Call is one function call: Func is the called name as written (listKeys, sa.listKeys, ...).
type Call struct {
	Func string
	Line int
}

// Literal returns the literal string v stands for: a string literal, or an identifier naming
// a variable or parameter (default value) of this file that is one. Empty otherwise.
func (f *File) Literal(v *Value) string {
	for depth := 0; v != nil && depth < 8; depth++ {
		switch v.Kind {
		case KindString:
			return v.Str
		case KindExpr:
			v = f.lookup(v.Text)
		default:
			return ""
		}
	}
	return ""
}

func (f *File) lookup(name string) *Value {
	for _, vr := range f.Vars {
		if vr.Name == name {
			return vr.Value
		}
	}
	for _, p := range f.Params {
		if p.Name == name {
			return p.Default
		}
	}
	return nil
}

// ResourcesOfType returns the resources whose type equals typ (case-insensitive).
func (f *File) ResourcesOfType(typ string) []Resource {
	var out []Resource
	for _, r := range f.Resources {
		if strings.EqualFold(r.Type, typ) {
			out = append(out, r)
		}
	}
	return out
}
