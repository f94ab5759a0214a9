package bicepcheck

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/ordersink/orders-consumer/tools/bicepcheck/appconfig"
)

// Finding is one broken rule.
type Finding struct {
	Rule    string
	File    string
	Line    int
	Message string
}

func (f Finding) String() string {
	return fmt.Sprintf("%s:%d: [%s] %s", f.File, f.Line, f.Rule, f.Message)
}

// Project is every Bicep file of a deployment plus the function app configuration it serves.
type Project struct {
	Files []*File
	App   *appconfig.App
	// HandlerDir holds the Go sources of the handler package, which rule parked-lifetime reads
	// for what a parking envelope's bodyRef names; empty means App.Root's handler/.
	HandlerDir string
}

// Load parses every .bicep file under bicepDir and reads the function app under appRoot.
func Load(bicepDir, appRoot string) (*Project, error) {
	app, err := appconfig.Load(appRoot)
	if err != nil {
		return nil, err
	}
	p := &Project{App: app}
	err = filepath.WalkDir(bicepDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".bicep") {
			return err
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		f, err := Parse(path, src)
		if err != nil {
			return err
		}
		p.Files = append(p.Files, f)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(p.Files) == 0 {
		return nil, fmt.Errorf("no .bicep files under %s", bicepDir)
	}
	return p, nil
}

// Check runs every rule and returns the findings sorted by file and line.
func (p *Project) Check() []Finding {
	var all []Finding
	for _, r := range Rules {
		all = append(all, r.Check(p)...)
	}
	sort.SliceStable(all, func(i, j int) bool {
		if all[i].File != all[j].File {
			return all[i].File < all[j].File
		}
		return all[i].Line < all[j].Line
	})
	return all
}

// resources returns the declared (not existing) resources of a type across the project.
func (p *Project) resources(typ string) []located {
	var out []located
	for _, f := range p.Files {
		for _, r := range f.ResourcesOfType(typ) {
			if !r.Existing {
				out = append(out, located{f, r})
			}
		}
	}
	return out
}

// named returns the declared resource of a type whose literal name is name.
func (p *Project) named(typ, name string) (located, bool) {
	for _, l := range p.resources(typ) {
		if l.Name() == name {
			return l, true
		}
	}
	return located{}, false
}

// located is a resource with the file it is declared in.
type located struct {
	File *File
	Resource
}

func (l located) Name() string { return l.Resource.Name(l.File) }

func (l located) finding(rule, format string, args ...any) Finding {
	return Finding{Rule: rule, File: l.File.Path, Line: l.Line, Message: fmt.Sprintf(format, args...)}
}
