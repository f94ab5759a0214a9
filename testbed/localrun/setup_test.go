package localrun

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ordersink/orders-consumer/testbed/hostemu"
)

// testApp is a function app with two functions on one queue and one that
// is not a Service Bus trigger.
func testApp(t *testing.T) *hostemu.App {
	t.Helper()
	app, err := hostemu.LoadApp(writeTree(t, map[string]string{
		"host.json":                        `{"version":"2.0","customHandler":{"description":{"defaultExecutablePath":"bin/handler"}}}`,
		"ProcessOrder/function.json":       `{"bindings":[{"name":"message","type":"serviceBusTrigger","direction":"in","queueName":"orders"}]}`,
		"ProcessOrderBatch/function.json":  `{"bindings":[{"name":"messages","type":"serviceBusTrigger","direction":"in","queueName":"orders","cardinality":"many","dataType":"string"}]}`,
		"PublishOrderEvents/function.json": `{"bindings":[{"name":"documents","type":"cosmosDBTrigger","direction":"in"}]}`,
	}))
	if err != nil {
		t.Fatal(err)
	}
	return app
}

// writeTree writes files (path: text) into a new folder and returns it.
func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, text := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestSelectFunctions(t *testing.T) {
	app := testApp(t)
	tests := []struct {
		name    string
		environ []string
		names   []string
		want    []string
		notRun  string
	}{
		{"every enabled Service Bus function competes for the queue", []string{"AzureWebJobs.PublishOrderEvents.Disabled=true"}, nil,
			[]string{"ProcessOrder", "ProcessOrderBatch"}, "PublishOrderEvents (disabled)"},
		{"the app setting disables a function", []string{"AzureWebJobs.ProcessOrderBatch.Disabled=true"}, nil,
			[]string{"ProcessOrder"}, "ProcessOrderBatch (disabled)"},
		{"naming a function runs it even when disabled, and only it", []string{"AzureWebJobs.ProcessOrderBatch.Disabled=True"},
			[]string{"ProcessOrderBatch"}, []string{"ProcessOrderBatch"}, "ProcessOrder (disabled)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			settings := hostemu.NewSettings(tt.environ)
			fns, err := selectFunctions(app, settings, tt.names)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, fn := range fns {
				got = append(got, fn.Name)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("functions %v, want %v", got, tt.want)
			}
			if left := strings.Join(notRun(app, settings, fns, false), ", "); !strings.Contains(left, tt.notRun) {
				t.Errorf("not run: %s; want it to mention %s", left, tt.notRun)
			}
		})
	}
	// The publisher runs beside the queue on its change feed: never "not run".
	settings := hostemu.NewSettings(nil)
	fns, err := selectFunctions(app, settings, nil)
	if err != nil {
		t.Fatal(err)
	}
	if left := strings.Join(notRun(app, settings, fns, true), ", "); strings.Contains(left, "PublishOrderEvents") {
		t.Errorf("not run: %s; PublishOrderEvents runs on the change feed", left)
	}
	if _, err := selectFunctions(app, hostemu.NewSettings(nil), []string{"PublishOrderEvents"}); err == nil {
		t.Error("a cosmosDBTrigger function was accepted as a queue consumer")
	}
}

func TestLocalSettingsLoseToTheEnvironment(t *testing.T) {
	p := filepath.Join(t.TempDir(), "local.settings.json")
	if err := os.WriteFile(p, []byte(`{"Values":{"COSMOS_ENDPOINT":"http://127.0.0.1:8081/","AzureWebJobs.ProcessOrderBatch.Disabled":"true"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	s := hostemu.NewSettings([]string{"COSMOS_ENDPOINT=http://127.0.0.1:9999/"})
	skipped, err := s.LoadLocalSettings(p)
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := s.Get("COSMOS_ENDPOINT"); v != "http://127.0.0.1:9999/" || !slices.Equal(skipped, []string{"COSMOS_ENDPOINT"}) {
		t.Errorf("COSMOS_ENDPOINT = %s (skipped %v), want the environment's", v, skipped)
	}
	if !s.FunctionDisabled("ProcessOrderBatch") || s.FunctionDisabled("ProcessOrder") {
		t.Error("AzureWebJobs.<name>.Disabled from local.settings.json not honoured")
	}
}
