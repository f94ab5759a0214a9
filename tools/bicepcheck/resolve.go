package bicepcheck

import (
	"path/filepath"
	"strings"
)

// literalAcross returns the literal string v stands for in file f, following what one file
// alone cannot: a parameter to the value the module declaration that calls f passes in, a
// module's output to its value in the module's file, and a resource's .name to its name. It
// returns "" as soon as a step is computed (a call, an interpolation, a parameter two callers
// disagree on).
func (p *Project) literalAcross(f *File, v *Value) string {
	for depth := 0; f != nil && v != nil && depth < 16; depth++ {
		switch v.Kind {
		case KindString:
			return v.Str
		case KindExpr:
		default:
			return ""
		}
		text := strings.TrimSpace(v.Text)
		if sym, out, ok := strings.Cut(text, ".outputs."); ok {
			f, v = p.moduleOutput(f, sym, out)
			continue
		}
		if sym, ok := strings.CutSuffix(text, ".name"); ok {
			v = nil
			for _, r := range f.Resources {
				if r.Symbol == sym {
					v = r.Body.Get("name")
				}
			}
			continue
		}
		if passed, from, ok := p.passedParam(f, text); ok {
			f, v = from, passed
			continue
		}
		v = f.lookup(text)
	}
	return ""
}

// moduleOutput returns the file a module symbol of f refers to and the value of its output.
func (p *Project) moduleOutput(f *File, symbol, output string) (*File, *Value) {
	for _, m := range f.Modules {
		if m.Symbol != symbol {
			continue
		}
		target := p.file(filepath.Join(filepath.Dir(f.Path), m.Path))
		if target == nil {
			return nil, nil
		}
		for _, o := range target.Outputs {
			if o.Name == output {
				return target, o.Value
			}
		}
	}
	return nil, nil
}

// passedParam returns the value the module declarations calling f pass for its parameter
// name, when f declares that parameter and every caller passes the same text.
func (p *Project) passedParam(f *File, name string) (*Value, *File, bool) {
	declared := false
	for _, prm := range f.Params {
		declared = declared || prm.Name == name
	}
	if !declared {
		return nil, nil, false
	}
	var value *Value
	var from *File
	for _, g := range p.Files {
		for _, m := range g.Modules {
			if p.file(filepath.Join(filepath.Dir(g.Path), m.Path)) != f {
				continue
			}
			passed := m.Body.Get("params", name)
			if passed == nil {
				continue
			}
			if value != nil && strings.TrimSpace(value.Text) != strings.TrimSpace(passed.Text) {
				return nil, nil, true // callers disagree: computed as far as this reader knows
			}
			value, from = passed, g
		}
	}
	return value, from, value != nil
}

// file returns the parsed file at path, or nil.
func (p *Project) file(path string) *File {
	path = filepath.Clean(path)
	for _, f := range p.Files {
		if filepath.Clean(f.Path) == path {
			return f
		}
	}
	return nil
}
