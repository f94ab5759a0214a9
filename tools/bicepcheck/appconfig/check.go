package appconfig

import (
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"sort"
	"strings"

	"github.com/ordersink/orders-consumer/tools/bicepcheck/funcpack"
)

// The names the contract and the deployment fix. Changing one means changing
// docs/contract.md, the function.json files and bicep/ together.
const (
	ExecutablePath = "bin/handler"
	OrdersQueue    = "orders"
	ParkingQueue   = "orders-deadletter"
	EventsTopic    = "order-events"
	ParkingBinding = "parking"
	// RequeueBinding is ProcessOrderBatch's output back to the orders queue:
	// a batch completed for a message on its last delivery gives its young
	// transient messages back through it (docs/adr/0007-holding-through-outages.md).
	RequeueBinding       = "requeue"
	EventsBinding        = "events"
	ServiceBusConnection = "ServiceBusConnection"
	CosmosConnection     = "CosmosDBConnection"
	LeaseContainer       = "leases"
	ExtensionBundleID    = "Microsoft.Azure.Functions.ExtensionBundle"

	// EmulatorKey is the Cosmos DB emulator's published, well-known key: the one key
	// local.settings.json may hold.
	EmulatorKey = "C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw=="
)

// HTTPRequestBinding and HTTPResponseBinding are the names every HTTP function uses: the
// handler reads Data.req and answers in Outputs.res (docs/host-wire-format.md).
const (
	HTTPRequestBinding  = "req"
	HTTPResponseBinding = "res"
)

// Rule ids of Check's problems.
const (
	RuleHost          = "host"
	RuleFunctions     = "functions"
	RuleLocalSettings = "local-settings"
	RuleSecrets       = "local-secrets"
	RuleFuncIgnore    = "funcignore"
	RuleSettings      = "settings"
)

// Problem is one disagreement between the configuration files and the contract.
type Problem struct {
	Rule    string
	File    string
	Message string
}

func (p Problem) String() string { return fmt.Sprintf("%s: [%s] %s", p.File, p.Rule, p.Message) }

type checker struct {
	app      *App
	problems []Problem
}

func (c *checker) addf(rule, file, format string, args ...any) {
	if rel, err := filepath.Rel(c.app.Root, file); err == nil {
		file = rel
	}
	c.problems = append(c.problems, Problem{Rule: rule, File: file, Message: fmt.Sprintf(format, args...)})
}

// Check returns every problem found; none means the files agree with each other and the contract.
func Check(app *App) []Problem {
	c := &checker{app: app}
	c.host()
	c.functions()
	c.localSettings()
	c.funcIgnore()
	c.settings()
	return c.problems
}

func (c *checker) host() {
	h, file := c.app.Host, filepath.Join(c.app.Root, "host.json")
	if h.Version != "2.0" {
		c.addf(RuleHost, file, `version is %q, want "2.0"`, h.Version)
	}
	if h.CustomHandler == nil {
		c.addf(RuleHost, file, "no customHandler section: the host would not start bin/handler")
	} else {
		if p := h.CustomHandler.Description.DefaultExecutablePath; p != ExecutablePath {
			c.addf(RuleHost, file, "customHandler.description.defaultExecutablePath is %q, want %q (make build and make publish build that file)", p, ExecutablePath)
		}
		if h.CustomHandler.EnableForwardingHTTPRequest {
			c.addf(RuleHost, file, "customHandler.enableForwardingHttpRequest is true: only for HTTP-only apps; the handler speaks the invocation envelope")
		}
	}
	if b := h.ExtensionBundle; b == nil || b.ID != ExtensionBundleID || (b.Version != "[4.*, 5.0.0)" && b.Version != "[4.0.0, 5.0.0)") {
		c.addf(RuleHost, file, `extensionBundle must be %s version "[4.*, 5.0.0)" (Service Bus extension 5.x, identity connections)`, ExtensionBundleID)
	}
	if a := h.Extensions.ServiceBus.AutoCompleteMessages; a != nil && !*a {
		c.addf(RuleHost, file, "extensions.serviceBus.autoCompleteMessages is false: a custom handler cannot settle messages, so nothing would ever complete them")
	}
	c.sampling(file)
}

// sampling checks that Application Insights never samples away a trace: the handler's stdout
// lines arrive as traces, and the hash-mismatch alert and the runbook's queries count them. The
// host samples adaptively (about 20 items/s) unless a type is excluded; setting excludedTypes
// replaces the default "Request;Exception", so those two must stay listed.
func (c *checker) sampling(file string) {
	s := c.app.Host.Logging.ApplicationInsights.SamplingSettings
	if s != nil && s.IsEnabled != nil && !*s.IsEnabled {
		return
	}
	var excluded []string
	if s != nil {
		excluded = strings.Split(s.ExcludedTypes, ";")
	}
	for _, want := range []string{"Trace", "Request", "Exception"} {
		if !containsFold(excluded, want) {
			c.addf(RuleHost, file, "logging.applicationInsights.samplingSettings.excludedTypes lacks %s: adaptive sampling would drop %s telemetry (traces carry the handler's outcome lines the hash-mismatch alert and the runbook count)", want, strings.ToLower(want))
		}
	}
}

func containsFold(list []string, s string) bool {
	for _, v := range list {
		if strings.EqualFold(strings.TrimSpace(v), s) {
			return true
		}
	}
	return false
}

func (c *checker) functions() {
	if c.app.Function("ProcessOrder") == nil {
		c.addf(RuleFunctions, c.app.Root, "no ProcessOrder/function.json: the contract's Service Bus-triggered function is missing")
	}
	for i := range c.app.Functions {
		fn := &c.app.Functions[i]
		c.bindings(fn)
		switch fn.Name {
		case "ProcessOrder":
			c.orderTrigger(fn, false)
		case "ProcessOrderBatch":
			c.orderTrigger(fn, true)
		case "PublishOrderEvents":
			c.publisher(fn)
		case "SubmitOrder":
			c.httpFunction(fn, "post", "orders")
		case "GetOrder":
			c.httpFunction(fn, "get", "orders/{orderId}")
		}
	}
}

// bindings checks what holds for every function.
func (c *checker) bindings(fn *Function) {
	triggers, names := 0, map[string]bool{}
	for _, b := range fn.Bindings {
		if b.IsTrigger() {
			triggers++
		}
		if b.Name == "" {
			c.addf(RuleFunctions, fn.Path, "a %s binding has no name", b.Type)
		} else if names[b.Name] {
			c.addf(RuleFunctions, fn.Path, "binding name %q is used twice", b.Name)
		}
		names[b.Name] = true
		if b.Direction != "in" && b.Direction != "out" {
			c.addf(RuleFunctions, fn.Path, "binding %q: direction %q, want in or out", b.Name, b.Direction)
		}
		switch b.Service() {
		case "servicebus":
			if b.Connection != ServiceBusConnection {
				c.addf(RuleFunctions, fn.Path, "binding %q: connection %q, want %q (the identity-based settings the deployment creates)", b.Name, b.Connection, ServiceBusConnection)
			}
			if b.IsTrigger() && b.QueueName != OrdersQueue {
				c.addf(RuleFunctions, fn.Path, "binding %q: triggers on %q, but the only queue the consumer reads is %q", b.Name, b.QueueName, OrdersQueue)
			}
			toOrders := b.QueueName == OrdersQueue && fn.Name == "ProcessOrderBatch" && b.Name == RequeueBinding
			if !b.IsTrigger() && b.QueueName != ParkingQueue && b.TopicName != EventsTopic && !toOrders {
				c.addf(RuleFunctions, fn.Path, "binding %q: writes to queue %q / topic %q; the app may send only to queue %q, topic %q, and (ProcessOrderBatch's %q) queue %q", b.Name, b.QueueName, b.TopicName, ParkingQueue, EventsTopic, RequeueBinding, OrdersQueue)
			}
			if b.AutoCompleteMessages != nil && !*b.AutoCompleteMessages {
				c.addf(RuleFunctions, fn.Path, "binding %q: autoCompleteMessages false: a custom handler cannot complete messages itself", b.Name)
			}
			if v, ok := b.Raw["isSessionsEnabled"].(bool); ok && v {
				c.addf(RuleFunctions, fn.Path, "binding %q: isSessionsEnabled true, but the orders queue has no sessions", b.Name)
			}
		case "cosmosdb":
			if b.Connection != CosmosConnection {
				c.addf(RuleFunctions, fn.Path, "binding %q: connection %q, want %q", b.Name, b.Connection, CosmosConnection)
			}
		}
	}
	if triggers != 1 {
		c.addf(RuleFunctions, fn.Path, "%d trigger bindings, want exactly 1", triggers)
	}
}

func (c *checker) orderTrigger(fn *Function, batch bool) {
	t := fn.Trigger()
	if t == nil || !strings.EqualFold(t.Type, "serviceBusTrigger") {
		c.addf(RuleFunctions, fn.Path, "the trigger must be a serviceBusTrigger on queue %q", OrdersQueue)
		return
	}
	many := strings.EqualFold(t.Cardinality, "many")
	switch {
	case batch && !many:
		c.addf(RuleFunctions, fn.Path, `the batch trigger needs "cardinality": "many"`)
	case batch && t.DataType != "string" && t.DataType != "binary":
		c.addf(RuleFunctions, fn.Path, `the batch trigger needs "dataType": "binary" as shipped, or "string" (without it the host asks for object[] and JSON bodies fail to bind)`)
	case !batch && many:
		c.addf(RuleFunctions, fn.Path, `ProcessOrder takes one message per invocation; "cardinality": "many" belongs to ProcessOrderBatch`)
	}
	p := fn.Binding(ParkingBinding)
	if p == nil || !strings.EqualFold(p.Type, "serviceBus") || p.Direction != "out" || p.QueueName != ParkingQueue {
		c.addf(RuleFunctions, fn.Path, "needs the output binding %q: type serviceBus, direction out, queueName %q", ParkingBinding, ParkingQueue)
	}
}

// httpFunction checks an HTTP-triggered function against the routes of docs/contract.md: the
// request arrives as Data.req, the answer leaves as Outputs.res, and the route and method are
// the ones the contract gives. It has no other binding: the handler writes the order itself
// before it answers, and the host would send an output only after the answer, so a failed send
// would turn a true answer into a 500 (docs/adr/0012-http-api-decides-in-the-request.md). Who
// may call is rule http-auth's business (tools/bicepcheck).
func (c *checker) httpFunction(fn *Function, method, route string) {
	t := fn.Trigger()
	if t == nil || !strings.EqualFold(t.Type, "httpTrigger") || t.Name != HTTPRequestBinding {
		c.addf(RuleFunctions, fn.Path, "the trigger must be an httpTrigger named %q", HTTPRequestBinding)
		return
	}
	if got, _ := t.Raw["route"].(string); got != route {
		c.addf(RuleFunctions, fn.Path, "route is %q, want %q (served as /api/%s)", got, route, route)
	}
	methods, _ := t.Raw["methods"].([]any)
	if len(methods) != 1 || !strings.EqualFold(fmt.Sprint(methods[0]), method) {
		c.addf(RuleFunctions, fn.Path, "methods is %v, want [%q]: any other method must get the host's 404, not the handler", methods, method)
	}
	if r := fn.Binding(HTTPResponseBinding); r == nil || !strings.EqualFold(r.Type, "http") || r.Direction != "out" {
		c.addf(RuleFunctions, fn.Path, "needs the output binding %q: type http, direction out (the handler answers in Outputs.%s)", HTTPResponseBinding, HTTPResponseBinding)
	}
	for _, b := range fn.Bindings {
		if b.Name != HTTPRequestBinding && b.Name != HTTPResponseBinding {
			c.addf(RuleFunctions, fn.Path, "binding %q: an HTTP function has only %q and %q; the handler stores what it answers before it answers", b.Name, HTTPRequestBinding, HTTPResponseBinding)
		}
	}
}

func (c *checker) publisher(fn *Function) {
	t := fn.Trigger()
	if t == nil || !strings.EqualFold(t.Type, "cosmosDBTrigger") {
		c.addf(RuleFunctions, fn.Path, "the trigger must be a cosmosDBTrigger on the orders container")
		return
	}
	if t.LeaseContainerName != LeaseContainer {
		c.addf(RuleFunctions, fn.Path, "leaseContainerName is %q, want %q (the container bicep/ creates)", t.LeaseContainerName, LeaseContainer)
	}
	if t.CreateLeaseContainerIfNotExist != nil && *t.CreateLeaseContainerIfNotExist {
		c.addf(RuleFunctions, fn.Path, "createLeaseContainerIfNotExists is true, but the app's data-plane role cannot create containers")
	}
	e := fn.Binding(EventsBinding)
	if e == nil || !strings.EqualFold(e.Type, "serviceBus") || e.Direction != "out" || e.TopicName != EventsTopic {
		c.addf(RuleFunctions, fn.Path, "needs the output binding %q: type serviceBus, direction out, topicName %q", EventsBinding, EventsTopic)
	}
}

func (c *checker) localSettings() {
	file := filepath.Join(c.app.Root, "local.settings.json")
	ls := c.app.LocalSettings
	if ls == nil {
		c.addf(RuleLocalSettings, file, "missing: make run and func start read it")
		return
	}
	if ls.IsEncrypted {
		c.addf(RuleLocalSettings, file, "IsEncrypted is true: the file must hold plain local values only")
	}
	if v := ls.Values["FUNCTIONS_WORKER_RUNTIME"]; v != "custom" {
		c.addf(RuleLocalSettings, file, `FUNCTIONS_WORKER_RUNTIME is %q, want "custom"`, v)
	}
	for _, fn := range c.app.Functions {
		for _, b := range fn.Bindings {
			if b.Connection != "" && !hasConnection(ls.Values, b.Connection) {
				c.addf(RuleLocalSettings, file, "%s binding %q uses connection %q, but no %s or %s__* value is set", fn.Name, b.Name, b.Connection, b.Connection, b.Connection)
			}
			for _, name := range b.SettingReferences() {
				if _, ok := ls.Values[name]; !ok {
					c.addf(RuleLocalSettings, file, "%s binding %q reads %%%s%%, which is not set", fn.Name, b.Name, name)
				}
			}
		}
	}
	for name := range ls.Values {
		if f, ok := strings.CutPrefix(name, "AzureWebJobs."); ok && strings.HasSuffix(f, ".Disabled") {
			if c.app.Function(strings.TrimSuffix(f, ".Disabled")) == nil {
				c.addf(RuleLocalSettings, file, "%s names a function that does not exist", name)
			}
		}
	}
	c.localSecrets(file, ls.Values)
}

func hasConnection(values map[string]string, conn string) bool {
	if _, ok := values[conn]; ok {
		return true
	}
	for name := range values {
		if strings.HasPrefix(name, conn+"__") {
			return true
		}
	}
	return false
}

// localSecrets allows exactly one secret in local.settings.json: the Cosmos DB emulator's public
// key, and only next to a loopback endpoint.
func (c *checker) localSecrets(file string, values map[string]string) {
	for name, v := range values {
		upper := strings.ToUpper(name)
		switch {
		case name == "COSMOS_KEY":
			if v != "" && v != EmulatorKey {
				c.addf(RuleSecrets, file, "COSMOS_KEY holds a key that is not the emulator's public key")
			}
			if v != "" && !isLoopback(values["COSMOS_ENDPOINT"]) {
				c.addf(RuleSecrets, file, "COSMOS_KEY is set but COSMOS_ENDPOINT %q is not a loopback emulator", values["COSMOS_ENDPOINT"])
			}
		case isEmulatorConnection(v):
			// The Service Bus emulator's and the Cosmos DB emulator's published local values.
		case strings.Contains(v, "AccountKey=") || strings.Contains(v, "SharedAccessKey="):
			c.addf(RuleSecrets, file, "%s holds a connection string with a key that is not an emulator's published one on a loopback endpoint; use identity-based settings (%s__...)", name, name)
		case v != "" && (strings.Contains(upper, "KEY") || strings.Contains(upper, "SECRET") || strings.Contains(upper, "PASSWORD")):
			c.addf(RuleSecrets, file, "%s looks like a secret; local.settings.json may hold only the emulator key", name)
		}
	}
}

// EmulatorServiceBusKey is the placeholder key Microsoft's Service Bus emulator accepts
// (connection strings with UseDevelopmentEmulator=true).
const EmulatorServiceBusKey = "SAS_KEY_VALUE"

// isEmulatorConnection accepts exactly the connection strings of the local emulators: the
// Service Bus emulator's (UseDevelopmentEmulator=true, its placeholder key, a loopback host)
// and the Cosmos DB emulator's (its well-known key, a loopback endpoint).
func isEmulatorConnection(v string) bool {
	parts := map[string]string{}
	for _, kv := range strings.Split(v, ";") {
		if k, val, ok := strings.Cut(kv, "="); ok {
			parts[strings.ToLower(strings.TrimSpace(k))] = strings.TrimSpace(val)
		}
	}
	if strings.EqualFold(parts["usedevelopmentemulator"], "true") {
		return parts["sharedaccesskey"] == EmulatorServiceBusKey && isLoopback(parts["endpoint"])
	}
	if k, ok := parts["accountkey"]; ok {
		// The key ends in "==", which the split on "=" cut off.
		key := v[strings.Index(v, "AccountKey=")+len("AccountKey="):]
		key, _, _ = strings.Cut(key, ";")
		return k != "" && key == EmulatorKey && isLoopback(parts["accountendpoint"])
	}
	return false
}

func isLoopback(endpoint string) bool {
	u, err := url.Parse(endpoint)
	if err != nil {
		return false
	}
	host := u.Hostname()
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// funcIgnore computes the package `func azure functionapp publish` would upload, with Core
// Tools' own .funcignore matcher (package funcpack), and requires exactly host.json, the
// executable and every function.json.
func (c *checker) funcIgnore() {
	file := filepath.Join(c.app.Root, ".funcignore")
	if c.app.FuncIgnore == nil {
		c.addf(RuleFuncIgnore, file, "missing: func azure functionapp publish would upload every source file")
		return
	}
	ig, err := funcpack.ParseIgnore(strings.Join(c.app.FuncIgnore, "\n"))
	if err != nil {
		c.addf(RuleFuncIgnore, file, "%v", err)
		return
	}
	want := map[string]bool{"host.json": true, ExecutablePath: true}
	for _, fn := range c.app.Functions {
		want[fn.Name+"/function.json"] = true
	}
	packaged := map[string]bool{}
	for _, f := range funcpack.Package(c.app.Files, ig) {
		packaged[f] = true
		if !want[f] {
			c.addf(RuleFuncIgnore, file, "Core Tools would package %s, which the host does not run (patterns are anchored at the path start and * stays inside one folder)", f)
		}
	}
	for _, f := range sortedKeys(want) {
		if !packaged[f] {
			c.addf(RuleFuncIgnore, file, "Core Tools would leave %s out of the package; the host needs it", f)
		}
	}
}

func sortedKeys(m map[string]bool) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
