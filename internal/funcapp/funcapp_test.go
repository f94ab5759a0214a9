package funcapp

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoadReadsTheRepositoryApp(t *testing.T) {
	app, err := Load(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if h := app.Host.Handler(); h == nil || h.Description.DefaultExecutablePath != "bin/handler" {
		t.Errorf("customHandler = %+v, want bin/handler", h)
	}
	var names []string
	for _, f := range app.Functions {
		names = append(names, f.Name)
	}
	if got := strings.Join(names, ","); got != "GetOrder,ProcessOrder,ProcessOrderBatch,PublishOrderEvents,SubmitOrder" {
		t.Fatalf("functions %s", got)
	}
	po := app.Function("ProcessOrder")
	if tr := po.Trigger(); tr == nil || !tr.Binary() || tr.Many() || po.ServiceBusQueue() != "orders" {
		t.Errorf("ProcessOrder trigger %+v", tr)
	}
	if out := po.Outputs(); len(out) != 1 || out[0].Entity() != "orders-deadletter" || out[0].Service() != "servicebus" {
		t.Errorf("ProcessOrder outputs %+v", out)
	}
	pub := app.Function("PublishOrderEvents")
	if refs := pub.Trigger().SettingReferences(); strings.Join(refs, ",") != "COSMOS_CONTAINER,COSMOS_DATABASE" {
		t.Errorf("setting references %v", refs)
	}
}

func TestLoadFallsBackToHTTPWorkerAndNamesBadFiles(t *testing.T) {
	root := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("host.json", `{"httpWorker":{"description":{"defaultExecutablePath":"old"}}}`)
	write("F/function.json", `{"disabled":true,"bindings":[{"name":"m","type":"queueTrigger"}]}`)
	app, err := Load(root)
	if err != nil {
		t.Fatal(err)
	}
	if h := app.Host.Handler(); h == nil || h.Description.DefaultExecutablePath != "old" {
		t.Errorf("handler %+v, want the httpWorker section", h)
	}
	if f := app.Function("F"); f == nil || !f.Disabled || f.Trigger() == nil || f.Path != filepath.Join(root, "F", "function.json") {
		t.Errorf("function %+v", f)
	}

	write("G/function.json", `{"bindings":[`)
	if _, err := Load(root); err == nil || !strings.Contains(err.Error(), filepath.Join("G", "function.json")) {
		t.Errorf("err = %v, want one naming G/function.json", err)
	}
}

func TestLoadLocalSettings(t *testing.T) {
	ls, err := LoadLocalSettings(filepath.Join("..", "..", "local.settings.json"))
	if err != nil || ls == nil || ls.Values["FUNCTIONS_WORKER_RUNTIME"] != "custom" {
		t.Errorf("repository local.settings.json: %+v, %v", ls, err)
	}
	if ls, err := LoadLocalSettings(filepath.Join(t.TempDir(), "local.settings.json")); ls != nil || err != nil {
		t.Errorf("missing file: %+v, %v; want nil, nil", ls, err)
	}
	bad := filepath.Join(t.TempDir(), "local.settings.json")
	if err := os.WriteFile(bad, []byte(`{"Values":{"N":1}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadLocalSettings(bad); err == nil || !strings.Contains(err.Error(), bad) {
		t.Errorf("a non-string value: %v, want an error naming the file", err)
	}
}

// A binding's %NAME% expressions name the app settings it reads: several in
// one value, none in a value that is not a string, and "%%" names none.
func TestSettingReferences(t *testing.T) {
	b := Binding{Raw: map[string]any{"databaseName": "%COSMOS_DATABASE%", "containerName": "x-%A%-%B%", "n": 3,
		"queueName": "a%%b-%C%", "connection": "%D%%E%", "topicName": "%unclosed"}}
	got := strings.Join(b.SettingReferences(), ",")
	if got != "A,B,C,COSMOS_DATABASE,D,E" {
		t.Fatalf("SettingReferences = %s, want A,B,C,COSMOS_DATABASE,D,E", got)
	}
}
