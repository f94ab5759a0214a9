package bicepcheck

import (
	"fmt"
	"sort"
	"strings"

	"github.com/ordersink/orders-consumer/tools/bicepcheck/appconfig"
)

// appSettings are the function app's settings as the templates declare them: the keys of the
// `properties` object of a Microsoft.Web/sites/config resource, and of every object variable
// whose name ends in "Settings" in the same file (the convention bicep/README.md describes).
type appSettings struct {
	file   *File
	line   int
	values map[string]*Value
}

func (p *Project) appSettings() (appSettings, bool) {
	for _, f := range p.Files {
		for _, r := range f.ResourcesOfType(typeSiteConfig) {
			if r.Existing || r.Name(f) != "appsettings" {
				continue
			}
			s := appSettings{file: f, line: r.Line, values: map[string]*Value{}}
			add := func(obj *Value) {
				if obj == nil || obj.Kind != KindObject {
					return
				}
				for _, prop := range obj.Props {
					s.values[prop.Key] = prop.Value
				}
			}
			add(r.Body.Get("properties"))
			for _, v := range f.Vars {
				if strings.HasSuffix(v.Name, "Settings") {
					add(v.Value)
				}
			}
			return s, true
		}
	}
	return appSettings{}, false
}

func (s appSettings) finding(format string, args ...any) Finding {
	return Finding{Rule: RuleAppSettings, File: s.file.Path, Line: s.line, Message: fmt.Sprintf(format, args...)}
}

func (s appSettings) has(name string) bool { _, ok := s.values[name]; return ok }

// forbiddenSettings hold keys or connection strings, or would switch the handler to key auth.
var forbiddenSettings = map[string]string{
	"COSMOS_KEY":          "the handler would use the account key (emulators only)",
	"AzureWebJobsStorage": "a storage connection string; use AzureWebJobsStorage__accountName/__credential/__clientId",
	"WEBSITE_CONTENTAZUREFILECONNECTIONSTRING": "the Azure Files content share needs an account key",
}

func checkAppSettings(p *Project) []Finding {
	s, ok := p.appSettings()
	if !ok {
		return []Finding{{Rule: RuleAppSettings, File: p.Files[0].Path, Line: 1, Message: "no Microsoft.Web/sites/config 'appsettings' resource is declared"}}
	}
	var out []Finding
	required := map[string]string{
		"AzureWebJobsStorage__accountName": "identity-based host storage",
		"AzureWebJobsStorage__clientId":    "identity-based host storage with the user-assigned identity",
		"COSMOS_ENDPOINT":                  "docs/contract.md §2",
		"COSMOS_DATABASE":                  "docs/contract.md §2",
		"COSMOS_CONTAINER":                 "docs/contract.md §2",
		"AZURE_CLIENT_ID":                  "DefaultAzureCredential needs it to pick the user-assigned identity",
	}
	credentials := []string{"AzureWebJobsStorage"}
	for _, fn := range p.App.Functions {
		for _, b := range fn.Bindings {
			switch b.Service() {
			case "servicebus":
				required[b.Connection+"__fullyQualifiedNamespace"] = fmt.Sprintf("%s binding %s (identity-based Service Bus connection)", fn.Name, b.Name)
			case "cosmosdb":
				required[b.Connection+"__accountEndpoint"] = fmt.Sprintf("%s binding %s (identity-based Cosmos DB connection)", fn.Name, b.Name)
			}
			if b.Connection != "" {
				required[b.Connection+"__clientId"] = fmt.Sprintf("%s binding %s (the user-assigned identity)", fn.Name, b.Name)
				credentials = append(credentials, b.Connection)
				forbiddenSettingFor(&out, s, b.Connection)
			}
			for _, name := range b.SettingReferences() {
				required[name] = fmt.Sprintf("%s binding %s reads %%%s%%", fn.Name, b.Name, name)
			}
		}
	}
	for _, name := range sortedKeys(required) {
		if !s.has(name) {
			out = append(out, s.finding("missing app setting %s, needed by %s", name, required[name]))
		}
	}
	for _, conn := range credentials {
		if v, ok := s.values[conn+"__credential"]; !ok || s.file.Literal(v) != "managedidentity" {
			out = append(out, s.finding("%s__credential must be 'managedidentity'", conn))
		}
	}
	for _, name := range sortedKeys(s.values) {
		v := s.values[name]
		if why, bad := forbiddenSettings[name]; bad {
			out = append(out, s.finding("app setting %s must not be set: %s", name, why))
		}
		if v != nil && secretExpr.MatchString(v.Text) && name != "APPLICATIONINSIGHTS_CONNECTION_STRING" {
			out = append(out, s.finding("app setting %s = %s reads a key or connection string", name, v.Text))
		}
		if name == "FUNCTIONS_WORKER_RUNTIME" && s.file.Literal(v) != "custom" {
			out = append(out, s.finding("FUNCTIONS_WORKER_RUNTIME must be 'custom' (a Go custom handler)"))
		}
		if f, ok := strings.CutPrefix(name, "AzureWebJobs."); ok && strings.HasSuffix(f, ".Disabled") {
			if p.App.Function(strings.TrimSuffix(f, ".Disabled")) == nil {
				out = append(out, s.finding("%s names a function that does not exist", name))
			}
		}
	}
	return out
}

// forbiddenSettingFor rejects a setting named exactly like a connection: the host would read
// it as a connection string and ignore the identity-based settings.
func forbiddenSettingFor(out *[]Finding, s appSettings, conn string) {
	if s.has(conn) {
		*out = append(*out, s.finding("app setting %s is a connection string; the host would ignore %s__* (identity)", conn, conn))
		delete(s.values, conn)
	}
}

func checkEntities(p *Project) []Finding {
	var out []Finding
	at := func(fn appconfig.Function, format string, args ...any) {
		out = append(out, Finding{Rule: RuleEntities, File: fn.Path, Line: 1, Message: fmt.Sprintf(format, args...)})
	}
	for _, fn := range p.App.Functions {
		for _, b := range fn.Bindings {
			if b.QueueName != "" {
				if _, ok := p.named(typeQueue, b.QueueName); !ok {
					at(fn, "binding %s uses Service Bus queue %q, which no .bicep file declares", b.Name, b.QueueName)
				}
			}
			if b.TopicName != "" {
				if _, ok := p.named(typeTopic, b.TopicName); !ok {
					at(fn, "binding %s uses Service Bus topic %q, which no .bicep file declares", b.Name, b.TopicName)
				}
			}
			for _, name := range []string{b.DatabaseName, b.ContainerName} {
				if name != "" && !strings.Contains(name, "%") {
					if _, ok := p.named(typeContainer, name); !ok {
						if _, ok := p.named(typeCosmosDatabase, name); !ok {
							at(fn, "binding %s uses Cosmos DB %q, which no .bicep file declares", b.Name, name)
						}
					}
				}
			}
			if b.LeaseContainerName != "" {
				lease, ok := p.named(typeContainer, b.LeaseContainerName)
				if !ok {
					at(fn, "binding %s needs the lease container %q, which no .bicep file declares", b.Name, b.LeaseContainerName)
					continue
				}
				paths := literalStrings(lease.File, lease.Body.Get("properties", "resource", "partitionKey", "paths"))
				if len(paths) != 1 || paths[0] != "/id" {
					out = append(out, lease.finding(RuleEntities, "lease container %q must be partitioned on /id, not %v", b.LeaseContainerName, paths))
				}
			}
		}
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
