package hostemu

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/ordersink/orders-consumer/internal/funcapp"
)

// App is a function app as the host reads it from disk: host.json and one
// folder per function holding a function.json.
type App struct {
	Root      string
	Host      HostConfig
	Functions []*Function
}

// HostConfig is what the emulator uses from host.json.
type HostConfig struct {
	// Executable is customHandler.description.defaultExecutablePath.
	Executable       string
	WorkingDirectory string
	Arguments        []string
	// InitializationTimeout bounds one start of the handler (default 30 s).
	InitializationTimeout time.Duration
	// FunctionTimeout bounds one invocation (functionTimeout; 0 = none).
	FunctionTimeout time.Duration
	// MaxConcurrentCalls and MaxMessageBatchSize come from
	// extensions.serviceBus; defaults 16 and 1000.
	MaxConcurrentCalls  int
	MaxMessageBatchSize int
	// MaxAutoLockRenewalDuration is how long a single message's lock is
	// renewed (extensions.serviceBus; default 5 minutes, as the extension).
	MaxAutoLockRenewalDuration time.Duration
	// RoutePrefix is extensions.http.routePrefix (nil: the default "api").
	RoutePrefix *string
}

// Function is one function folder, read by package funcapp (the
// configuration checker reads the same files through it).
type Function = funcapp.Function

// Binding is one entry of a function.json "bindings" array.
type Binding = funcapp.Binding

// Function returns the function with the given name, or nil.
func (a *App) Function(name string) *Function {
	for _, f := range a.Functions {
		if f.Name == name {
			return f
		}
	}
	return nil
}

// LoadApp reads host.json and every <dir>/function.json under root.
func LoadApp(root string) (*App, error) {
	root, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	files, err := funcapp.Load(root)
	if err != nil {
		return nil, err
	}
	app := &App{Root: root}
	if app.Host, err = hostConfig(filepath.Join(root, "host.json"), files.Host); err != nil {
		return nil, err
	}
	for i := range files.Functions {
		f := &files.Functions[i]
		if f.Trigger() == nil {
			return nil, fmt.Errorf("%s: no trigger binding", f.Path)
		}
		app.Functions = append(app.Functions, f)
	}
	if len(app.Functions) == 0 {
		return nil, fmt.Errorf("%s: no */function.json: not a function app root", root)
	}
	return app, nil
}

// hostConfig is what the emulator takes from host.json, defaults filled in
// as the host fills them.
func hostConfig(path string, h funcapp.Host) (HostConfig, error) {
	c := HostConfig{
		InitializationTimeout:      30 * time.Second,
		MaxConcurrentCalls:         16,
		MaxMessageBatchSize:        1000,
		MaxAutoLockRenewalDuration: 5 * time.Minute,
	}
	var err error
	if ch := h.Handler(); ch != nil {
		d := ch.Description
		c.Executable, c.WorkingDirectory, c.Arguments = d.DefaultExecutablePath, d.WorkingDirectory, d.Arguments
		// The deprecated httpWorker section has no initializationTimeout.
		if h.CustomHandler != nil && ch.InitializationTimeout != "" {
			if c.InitializationTimeout, err = funcapp.ParseTimeSpan(ch.InitializationTimeout); err != nil {
				return c, fmt.Errorf("%s: customHandler.initializationTimeout: %w", path, err)
			}
		}
	}
	if c.Executable == "" {
		return c, fmt.Errorf("%s: customHandler.description.defaultExecutablePath is not set", path)
	}
	if h.FunctionTimeout != "" && h.FunctionTimeout != "-1" { // -1: no limit
		if c.FunctionTimeout, err = funcapp.ParseTimeSpan(h.FunctionTimeout); err != nil {
			return c, fmt.Errorf("%s: functionTimeout: %w", path, err)
		}
	}
	c.RoutePrefix = h.Extensions.HTTP.RoutePrefix
	if n := h.Extensions.ServiceBus.MaxConcurrentCalls; n > 0 {
		c.MaxConcurrentCalls = n
	}
	if n := h.Extensions.ServiceBus.MaxMessageBatchSize; n > 0 {
		c.MaxMessageBatchSize = n
	}
	if v := h.Extensions.ServiceBus.MaxAutoLockRenewalDuration; v != "" {
		if c.MaxAutoLockRenewalDuration, err = funcapp.ParseTimeSpan(v); err != nil {
			return c, fmt.Errorf("%s: extensions.serviceBus.maxAutoLockRenewalDuration: %w", path, err)
		}
	}
	return c, nil
}

// Executable resolves the handler path like the host: host.json's
// defaultExecutablePath (or override) relative to the app root when that
// file exists, otherwise a command on PATH.
func (a *App) Executable(override string) (string, error) {
	p := a.Host.Executable
	if override != "" {
		p = override
	}
	if !filepath.IsAbs(p) {
		abs := filepath.Join(a.Root, p)
		if st, err := os.Stat(abs); err == nil && !st.IsDir() {
			return abs, nil
		}
		if strings.ContainsRune(p, filepath.Separator) {
			return "", fmt.Errorf("handler %s not found under %s; build it first (make build)", p, a.Root)
		}
	}
	found, err := exec.LookPath(p)
	if err != nil {
		return "", fmt.Errorf("handler %s: %w (build it first: make build)", p, err)
	}
	return found, nil
}

// StartHandler starts the handler executable exe as the host does: in
// host.json's working directory, with its arguments expanded from the app
// settings, which are also its environment.
func (a *App) StartHandler(exe string, s *Settings, output io.Writer, log func(string)) (*Worker, error) {
	args := make([]string, len(a.Host.Arguments))
	for i, arg := range a.Host.Arguments {
		args[i] = s.Expand(arg)
	}
	return StartWorker(WorkerConfig{Path: exe, Dir: filepath.Join(a.Root, a.Host.WorkingDirectory), Args: args,
		Env: s.Environ(), AppRoot: a.Root, InitializationTimeout: a.Host.InitializationTimeout, Output: output, Log: log})
}
