// Package funcapp reads a function app root as the Functions host and Core
// Tools do: host.json, one <Function>/function.json per folder, and
// local.settings.json. The handler (its deadlines checked against host.json's
// clocks), the local host emulator (testbed/hostemu) and the configuration
// checker (tools/bicepcheck/appconfig) all read the files through it, so they
// cannot disagree about what the files say. It uses only the standard
// library: the checker is its own module (it needs cgo) and requires this one
// through a replace, so nothing else comes with it.
package funcapp

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
)

// App is the function app under one root.
type App struct {
	Root      string
	Host      Host
	Functions []Function
}

// Host is host.json, the members the emulator and the checker read.
type Host struct {
	Version         string         `json:"version"`
	FunctionTimeout string         `json:"functionTimeout"`
	CustomHandler   *CustomHandler `json:"customHandler"`
	// HTTPWorker is the deprecated name of CustomHandler; the host uses it
	// only when customHandler is absent.
	HTTPWorker      *CustomHandler `json:"httpWorker"`
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
		ServiceBus ServiceBus `json:"serviceBus"`
		HTTP       HTTP       `json:"http"`
	} `json:"extensions"`
}

// CustomHandler is host.json's customHandler section.
type CustomHandler struct {
	Description struct {
		DefaultExecutablePath string   `json:"defaultExecutablePath"`
		WorkingDirectory      string   `json:"workingDirectory"`
		Arguments             []string `json:"arguments"`
	} `json:"description"`
	InitializationTimeout       string `json:"initializationTimeout"`
	EnableForwardingHTTPRequest bool   `json:"enableForwardingHttpRequest"`
}

// Handler returns customHandler, or httpWorker when only that is present, or
// nil.
func (h Host) Handler() *CustomHandler {
	if h.CustomHandler != nil {
		return h.CustomHandler
	}
	return h.HTTPWorker
}

// ServiceBus is host.json's extensions.serviceBus section; zero values mean
// the extension's defaults.
type ServiceBus struct {
	AutoCompleteMessages       *bool  `json:"autoCompleteMessages"`
	MaxConcurrentCalls         int    `json:"maxConcurrentCalls"`
	MaxMessageBatchSize        int    `json:"maxMessageBatchSize"`
	MaxAutoLockRenewalDuration string `json:"maxAutoLockRenewalDuration"` // a TimeSpan
}

// HTTP is host.json's extensions.http section.
type HTTP struct {
	// RoutePrefix is put before every HTTP route; nil means the default
	// "api", "" means none.
	RoutePrefix *string `json:"routePrefix"`
}

// LoadHost reads one host.json.
func LoadHost(path string) (Host, error) {
	var h Host
	err := readJSON(path, &h)
	return h, err
}

// Load reads host.json and every <dir>/function.json under root, in name
// order. It fails on a missing host.json and on files that are not valid
// JSON; whether they make sense is for the caller to check.
func Load(root string) (*App, error) {
	app := &App{Root: root}
	var err error
	if app.Host, err = LoadHost(filepath.Join(root, "host.json")); err != nil {
		return nil, err
	}
	if app.Functions, err = LoadFunctions(root); err != nil {
		return nil, err
	}
	return app, nil
}

// LoadFunctions reads every <dir>/function.json under root, in name order.
func LoadFunctions(root string) ([]Function, error) {
	paths, err := filepath.Glob(filepath.Join(root, "*", "function.json"))
	if err != nil {
		return nil, err
	}
	sort.Strings(paths)
	var fns []Function
	for _, p := range paths {
		fn, err := readFunction(p)
		if err != nil {
			return nil, err
		}
		fns = append(fns, fn)
	}
	return fns, nil
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

func readFunction(path string) (Function, error) {
	var doc struct {
		Disabled bool              `json:"disabled"`
		Bindings []json.RawMessage `json:"bindings"`
	}
	if err := readJSON(path, &doc); err != nil {
		return Function{}, err
	}
	fn := Function{Name: filepath.Base(filepath.Dir(path)), Path: path, Disabled: doc.Disabled}
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

// LocalSettings is local.settings.json: the app settings Core Tools uses
// where the environment has none.
type LocalSettings struct {
	IsEncrypted bool              `json:"IsEncrypted"`
	Values      map[string]string `json:"Values"`
}

// LoadLocalSettings reads a local.settings.json; a missing file is nil and no
// error.
func LoadLocalSettings(path string) (*LocalSettings, error) {
	var ls LocalSettings
	err := readJSON(path, &ls)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &ls, nil
}
