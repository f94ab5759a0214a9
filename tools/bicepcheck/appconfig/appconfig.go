// Package appconfig reads the function app's configuration files (host.json, every
// <Function>/function.json, local.settings.json) and checks that they are valid and agree with
// each other and with the contract (docs/contract.md). It has no cgo; it reads host.json and
// function.json through funcapp, the package the host emulator reads them with.
package appconfig

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/ordersink/orders-consumer/internal/funcapp"
	"github.com/ordersink/orders-consumer/tools/bicepcheck/funcpack"
)

// App is the configuration of one function app root: host.json and the function folders
// (Root, Host, Functions, Function), local.settings.json and .funcignore.
type App struct {
	*funcapp.App
	LocalSettings *LocalSettings // nil when the file does not exist
	FuncIgnore    []string       // lines of .funcignore; nil when the file does not exist
	// Files are the files under Root that Core Tools considers for the package, plus the
	// binaries the Makefile and go build write into bin/ (they may exist on a developer's
	// machine but not in a clean checkout).
	Files []string
	// Handler are the settings cmd/handler reads (its envconfig tags) and Contract the rows of
	// docs/contract.md §2; nil when the app root has no handler sources or no contract.
	Handler  []Setting
	Contract []Documented
}

// Host is host.json; Function is one function folder and Binding one entry of its
// function.json. The host emulator (testbed/hostemu) reads the same files through the same
// package, funcapp, so the checker and the emulator cannot disagree on what they say.
type (
	Host          = funcapp.Host
	Function      = funcapp.Function
	Binding       = funcapp.Binding
	LocalSettings = funcapp.LocalSettings
)

// Load reads the configuration under root. It fails on files that are missing or not valid
// JSON; everything else is for Check to judge.
func Load(root string) (*App, error) {
	files, err := funcapp.Load(root)
	if err != nil {
		return nil, err
	}
	app := &App{App: files}
	if app.LocalSettings, err = funcapp.LoadLocalSettings(filepath.Join(root, "local.settings.json")); err != nil {
		return nil, err
	}
	if data, err := os.ReadFile(filepath.Join(root, ".funcignore")); err == nil {
		for _, l := range strings.Split(string(data), "\n") {
			if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
				app.FuncIgnore = append(app.FuncIgnore, l)
			}
		}
	}
	if app.Files, err = packageCandidates(root); err != nil {
		return nil, err
	}
	if app.Handler, err = HandlerSettings(filepath.Join(root, HandlerDir)); err != nil {
		return nil, err
	}
	if app.Contract, err = ContractSettings(filepath.Join(root, ContractPath)); err != nil {
		return nil, err
	}
	return app, nil
}

// packageCandidates lists what Core Tools would walk under root, plus bin/<name> for every
// command the repository builds (cmd/*, testbed/cmd/*, tools/*/cmd/*) and bin/handler.
func packageCandidates(root string) ([]string, error) {
	files, err := funcpack.Candidates(root)
	if err != nil {
		return nil, fmt.Errorf("list the files under %s: %w", root, err)
	}
	built := map[string]bool{ExecutablePath: true}
	for _, pattern := range []string{"cmd/*", "testbed/cmd/*", "tools/*/cmd/*"} {
		dirs, _ := filepath.Glob(filepath.Join(root, pattern))
		for _, d := range dirs {
			built["bin/"+filepath.Base(d)] = true
		}
	}
	for _, f := range files {
		delete(built, f)
	}
	for b := range built {
		files = append(files, b)
	}
	sort.Strings(files)
	return files, nil
}

// Overlay reads every <dir>/function.json under dir as if it were a function folder of the app:
// it replaces the function of the same name or adds one, and its function.json joins the files
// Core Tools considers for the package. Tests use it to check function folders other branches
// create, or broken ones, against the repository's real configuration.
func (a *App) Overlay(dir string) error {
	fns, err := funcapp.LoadFunctions(dir)
	if err != nil {
		return err
	}
	for _, fn := range fns {
		if old := a.Function(fn.Name); old != nil {
			*old = fn
		} else {
			a.Functions = append(a.Functions, fn)
		}
		if f := fn.Name + "/function.json"; !slices.Contains(a.Files, f) {
			a.Files = append(a.Files, f)
		}
	}
	sort.Slice(a.Functions, func(i, j int) bool { return a.Functions[i].Name < a.Functions[j].Name })
	sort.Strings(a.Files)
	return nil
}
