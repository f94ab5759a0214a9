package hostemu

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"
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
}

// Function is one function.json.
type Function struct {
	Name     string
	Disabled bool // "disabled": true in function.json
	Bindings []Binding
}

// Binding is one entry of a function.json "bindings" array.
type Binding struct {
	Name        string `json:"name"`
	Type        string `json:"type"`
	Direction   string `json:"direction"`
	QueueName   string `json:"queueName"`
	TopicName   string `json:"topicName"`
	Cardinality string `json:"cardinality"`
	DataType    string `json:"dataType"`
}

// Trigger returns the function's trigger binding, or nil.
func (f *Function) Trigger() *Binding {
	for i := range f.Bindings {
		if strings.HasSuffix(strings.ToLower(f.Bindings[i].Type), "trigger") {
			return &f.Bindings[i]
		}
	}
	return nil
}

// Outputs returns the output bindings ("direction": "out").
func (f *Function) Outputs() []Binding {
	var out []Binding
	for _, b := range f.Bindings {
		if strings.EqualFold(b.Direction, "out") {
			out = append(out, b)
		}
	}
	return out
}

// ServiceBusQueue returns the queue a serviceBusTrigger function reads, or "".
func (f *Function) ServiceBusQueue() string {
	if t := f.Trigger(); t != nil && strings.EqualFold(t.Type, "serviceBusTrigger") {
		return t.QueueName
	}
	return ""
}

// Many reports whether the trigger delivers batches ("cardinality": "many").
func (b *Binding) Many() bool { return strings.EqualFold(b.Cardinality, "many") }

// Binary reports whether the binding carries bytes ("dataType": "binary").
func (b *Binding) Binary() bool { return strings.EqualFold(b.DataType, "binary") }

// Entity is the queue or topic a Service Bus binding names.
func (b *Binding) Entity() string {
	if b.QueueName != "" {
		return b.QueueName
	}
	return b.TopicName
}

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
	app := &App{Root: root}
	if app.Host, err = readHostJSON(filepath.Join(root, "host.json")); err != nil {
		return nil, err
	}
	paths, err := filepath.Glob(filepath.Join(root, "*", "function.json"))
	if err != nil {
		return nil, err
	}
	sort.Strings(paths)
	for _, p := range paths {
		f, err := readFunctionJSON(p)
		if err != nil {
			return nil, err
		}
		app.Functions = append(app.Functions, f)
	}
	if len(app.Functions) == 0 {
		return nil, fmt.Errorf("%s: no */function.json: not a function app root", root)
	}
	return app, nil
}

func readHostJSON(path string) (HostConfig, error) {
	var doc struct {
		FunctionTimeout string `json:"functionTimeout"`
		CustomHandler   *struct {
			Description struct {
				DefaultExecutablePath string   `json:"defaultExecutablePath"`
				WorkingDirectory      string   `json:"workingDirectory"`
				Arguments             []string `json:"arguments"`
			} `json:"description"`
			InitializationTimeout string `json:"initializationTimeout"`
		} `json:"customHandler"`
		// The deprecated name; customHandler wins when both are present.
		HTTPWorker *struct {
			Description struct {
				DefaultExecutablePath string   `json:"defaultExecutablePath"`
				WorkingDirectory      string   `json:"workingDirectory"`
				Arguments             []string `json:"arguments"`
			} `json:"description"`
		} `json:"httpWorker"`
		Extensions struct {
			ServiceBus struct {
				MaxConcurrentCalls         int    `json:"maxConcurrentCalls"`
				MaxMessageBatchSize        int    `json:"maxMessageBatchSize"`
				MaxAutoLockRenewalDuration string `json:"maxAutoLockRenewalDuration"`
			} `json:"serviceBus"`
		} `json:"extensions"`
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return HostConfig{}, err
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return HostConfig{}, fmt.Errorf("%s: %w", path, err)
	}
	c := HostConfig{
		InitializationTimeout:      30 * time.Second,
		MaxConcurrentCalls:         16,
		MaxMessageBatchSize:        1000,
		MaxAutoLockRenewalDuration: 5 * time.Minute,
	}
	switch {
	case doc.CustomHandler != nil:
		d := doc.CustomHandler.Description
		c.Executable, c.WorkingDirectory, c.Arguments = d.DefaultExecutablePath, d.WorkingDirectory, d.Arguments
		if doc.CustomHandler.InitializationTimeout != "" {
			if c.InitializationTimeout, err = parseTimeSpan(doc.CustomHandler.InitializationTimeout); err != nil {
				return c, fmt.Errorf("%s: customHandler.initializationTimeout: %w", path, err)
			}
		}
	case doc.HTTPWorker != nil:
		d := doc.HTTPWorker.Description
		c.Executable, c.WorkingDirectory, c.Arguments = d.DefaultExecutablePath, d.WorkingDirectory, d.Arguments
	}
	if c.Executable == "" {
		return c, fmt.Errorf("%s: customHandler.description.defaultExecutablePath is not set", path)
	}
	if doc.FunctionTimeout != "" && doc.FunctionTimeout != "-1" { // -1: no limit
		if c.FunctionTimeout, err = parseTimeSpan(doc.FunctionTimeout); err != nil {
			return c, fmt.Errorf("%s: functionTimeout: %w", path, err)
		}
	}
	if n := doc.Extensions.ServiceBus.MaxConcurrentCalls; n > 0 {
		c.MaxConcurrentCalls = n
	}
	if n := doc.Extensions.ServiceBus.MaxMessageBatchSize; n > 0 {
		c.MaxMessageBatchSize = n
	}
	if v := doc.Extensions.ServiceBus.MaxAutoLockRenewalDuration; v != "" {
		if c.MaxAutoLockRenewalDuration, err = parseTimeSpan(v); err != nil {
			return c, fmt.Errorf("%s: extensions.serviceBus.maxAutoLockRenewalDuration: %w", path, err)
		}
	}
	return c, nil
}

func readFunctionJSON(path string) (*Function, error) {
	var doc struct {
		Disabled bool      `json:"disabled"`
		Bindings []Binding `json:"bindings"`
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	f := &Function{Name: filepath.Base(filepath.Dir(path)), Disabled: doc.Disabled, Bindings: doc.Bindings}
	if f.Trigger() == nil {
		return nil, fmt.Errorf("%s: no trigger binding", path)
	}
	return f, nil
}

// parseTimeSpan reads a .NET TimeSpan in the [d.]hh:mm:ss[.fffffff] form
// host.json uses.
func parseTimeSpan(s string) (time.Duration, error) {
	var days int
	rest := s
	if i := strings.IndexByte(s, '.'); i >= 0 && i < strings.IndexByte(s, ':') {
		if _, err := fmt.Sscanf(s[:i], "%d", &days); err != nil {
			return 0, fmt.Errorf("%q is not a TimeSpan such as 00:05:00", s)
		}
		rest = s[i+1:]
	}
	var h, m int
	var sec float64
	if n, err := fmt.Sscanf(rest, "%d:%d:%g", &h, &m, &sec); err != nil || n != 3 {
		return 0, fmt.Errorf("%q is not a TimeSpan such as 00:05:00", s)
	}
	d := time.Duration(days)*24*time.Hour + time.Duration(h)*time.Hour + time.Duration(m)*time.Minute +
		time.Duration(sec*float64(time.Second))
	return d, nil
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
