// Package appconfig reads the function app's configuration files (host.json, every
// <Function>/function.json, local.settings.json) and checks that they are valid and agree with
// each other and with the contract (../shared/contract.md). It has no cgo and no dependencies.
package appconfig

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/ordersink/orders-consumer/tools/bicepcheck/funcpack"
)

// App is the configuration of one function app root.
type App struct {
	Root          string
	Host          Host
	Functions     []Function
	LocalSettings *LocalSettings // nil when the file does not exist
	FuncIgnore    []string       // lines of .funcignore; nil when the file does not exist
	// Files are the files under Root that Core Tools considers for the package, plus the
	// binaries the Makefile and go build write into bin/ (they may exist on a developer's
	// machine but not in a clean checkout).
	Files []string
}

// Host is the part of host.json the checks read.
type Host struct {
	Version       string `json:"version"`
	CustomHandler *struct {
		Description struct {
			DefaultExecutablePath string   `json:"defaultExecutablePath"`
			WorkingDirectory      string   `json:"workingDirectory"`
			Arguments             []string `json:"arguments"`
		} `json:"description"`
		EnableForwardingHTTPRequest bool `json:"enableForwardingHttpRequest"`
	} `json:"customHandler"`
	ExtensionBundle *struct {
		ID      string `json:"id"`
		Version string `json:"version"`
	} `json:"extensionBundle"`
	Logging struct {
		ApplicationInsights struct {
			SamplingSettings *struct {
				IsEnabled     *bool  `json:"isEnabled"`
				ExcludedTypes string `json:"excludedTypes"`
			} `json:"samplingSettings"`
		} `json:"applicationInsights"`
	} `json:"logging"`
	Extensions struct {
		ServiceBus struct {
			AutoCompleteMessages *bool `json:"autoCompleteMessages"`
		} `json:"serviceBus"`
	} `json:"extensions"`
}

// Function is one function folder.
type Function struct {
	Name     string // the folder name, which is also the function name and the URL path
	Path     string
	Bindings []Binding
}

// Binding is one entry of function.json "bindings". Raw keeps every property as written, for
// checks on properties this struct does not name.
type Binding struct {
	Name                           string         `json:"name"`
	Type                           string         `json:"type"`
	Direction                      string         `json:"direction"`
	Connection                     string         `json:"connection"`
	QueueName                      string         `json:"queueName"`
	TopicName                      string         `json:"topicName"`
	DatabaseName                   string         `json:"databaseName"`
	ContainerName                  string         `json:"containerName"`
	LeaseContainerName             string         `json:"leaseContainerName"`
	Cardinality                    string         `json:"cardinality"`
	DataType                       string         `json:"dataType"`
	AutoCompleteMessages           *bool          `json:"autoCompleteMessages"`
	CreateLeaseContainerIfNotExist *bool          `json:"createLeaseContainerIfNotExists"`
	Raw                            map[string]any `json:"-"`
}

// IsTrigger reports whether the binding is the function's trigger.
func (b Binding) IsTrigger() bool { return strings.HasSuffix(strings.ToLower(b.Type), "trigger") }

// Service is the Azure service a binding talks to: "servicebus", "cosmosdb" or "" for others.
func (b Binding) Service() string {
	t := strings.ToLower(strings.TrimSuffix(strings.ToLower(b.Type), "trigger"))
	switch t {
	case "servicebus":
		return "servicebus"
	case "cosmosdb":
		return "cosmosdb"
	}
	return ""
}

// SettingReferences returns the app setting names a binding reads through %NAME% expressions.
func (b Binding) SettingReferences() []string {
	var names []string
	for _, v := range b.Raw {
		s, ok := v.(string)
		if !ok {
			continue
		}
		for {
			start := strings.Index(s, "%")
			if start < 0 {
				break
			}
			end := strings.Index(s[start+1:], "%")
			if end < 0 {
				break
			}
			names = append(names, s[start+1:start+1+end])
			s = s[start+1+end+1:]
		}
	}
	sort.Strings(names)
	return names
}

// LocalSettings is local.settings.json.
type LocalSettings struct {
	IsEncrypted bool              `json:"IsEncrypted"`
	Values      map[string]string `json:"Values"`
}

// Load reads the configuration under root. It fails on files that are missing or not valid
// JSON; everything else is for Check to judge.
func Load(root string) (*App, error) {
	app := &App{Root: root}
	if err := readJSON(filepath.Join(root, "host.json"), &app.Host); err != nil {
		return nil, err
	}
	paths, err := filepath.Glob(filepath.Join(root, "*", "function.json"))
	if err != nil {
		return nil, err
	}
	sort.Strings(paths)
	for _, p := range paths {
		fn, err := readFunction(p)
		if err != nil {
			return nil, err
		}
		app.Functions = append(app.Functions, fn)
	}
	var ls LocalSettings
	switch err := readJSON(filepath.Join(root, "local.settings.json"), &ls); {
	case err == nil:
		app.LocalSettings = &ls
	case !errors.Is(err, fs.ErrNotExist):
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

// Function returns the function with the given name, or nil.
func (a *App) Function(name string) *Function {
	for i := range a.Functions {
		if a.Functions[i].Name == name {
			return &a.Functions[i]
		}
	}
	return nil
}

// Trigger returns the function's trigger binding, or nil.
func (f *Function) Trigger() *Binding {
	for i := range f.Bindings {
		if f.Bindings[i].IsTrigger() {
			return &f.Bindings[i]
		}
	}
	return nil
}

// Binding returns the binding with the given name, or nil.
func (f *Function) Binding(name string) *Binding {
	for i := range f.Bindings {
		if f.Bindings[i].Name == name {
			return &f.Bindings[i]
		}
	}
	return nil
}

func readFunction(path string) (Function, error) {
	var doc struct {
		Bindings []json.RawMessage `json:"bindings"`
	}
	if err := readJSON(path, &doc); err != nil {
		return Function{}, err
	}
	fn := Function{Name: filepath.Base(filepath.Dir(path)), Path: path}
	for i, raw := range doc.Bindings {
		var b Binding
		if err := json.Unmarshal(raw, &b); err != nil {
			return Function{}, fmt.Errorf("%s: binding %d: %w", path, i, err)
		}
		if err := json.Unmarshal(raw, &b.Raw); err != nil {
			return Function{}, fmt.Errorf("%s: binding %d: %w", path, i, err)
		}
		fn.Bindings = append(fn.Bindings, b)
	}
	return fn, nil
}

func readJSON(path string, v any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%s is not valid JSON: %w", path, err)
	}
	return nil
}
