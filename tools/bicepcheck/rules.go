package bicepcheck

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/ordersink/orders-consumer/orders"
	"github.com/ordersink/orders-consumer/tools/bicepcheck/appconfig"
	"github.com/ordersink/orders-consumer/tools/bicepcheck/isoduration"
)

// Rule ids.
const (
	RuleSyntax       = "syntax"
	RuleLocalAuth    = "local-auth"
	RuleOrdersQueue  = "orders-queue"
	RulePartitionKey = "partition-key"
	RuleSecrets      = "secrets"
	RuleRoles        = "roles"
	RuleAppSettings  = "app-settings"
	RuleEntities     = "entities"
)

const (
	typeNamespace      = "Microsoft.ServiceBus/namespaces"
	typeQueue          = "Microsoft.ServiceBus/namespaces/queues"
	typeTopic          = "Microsoft.ServiceBus/namespaces/topics"
	typeCosmosAccount  = "Microsoft.DocumentDB/databaseAccounts"
	typeCosmosDatabase = "Microsoft.DocumentDB/databaseAccounts/sqlDatabases"
	typeContainer      = "Microsoft.DocumentDB/databaseAccounts/sqlDatabases/containers"
	typeSQLRole        = "Microsoft.DocumentDB/databaseAccounts/sqlRoleAssignments"
	typeRoleAssignment = "Microsoft.Authorization/roleAssignments"
	typeStorage        = "Microsoft.Storage/storageAccounts"
	typeAppInsights    = "Microsoft.Insights/components"
	typeSiteConfig     = "Microsoft.Web/sites/config"
)

// Rule is one policy rule over a whole project.
type Rule struct {
	ID    string
	Doc   string
	Check func(*Project) []Finding
}

// Rules are all the policy rules, in the order they run.
var Rules = []Rule{
	{RuleSyntax, "every .bicep file parses with tree-sitter-bicep 1.1.0", checkSyntax},
	{RuleLocalAuth, "Service Bus, Cosmos DB and Application Insights have local (key) auth off; storage has shared-key access off", checkLocalAuth},
	{RuleOrdersQueue, "the orders queue has duplicate detection, maxDeliveryCount one past the handler's retry budget, dead-lettering on expiry, a valid window, and a valid lock equal to the handler's QUEUE_LOCK_DURATION", checkOrdersQueue},
	{RulePartitionKey, "the orders container is partitioned on /orderId with TTL switched on", checkPartitionKey},
	{RuleSecrets, "no output carries a secret and no template lists keys", checkSecrets},
	{RuleRoles, "every role id is a known least-privilege built-in role, under the right name, on an explicit narrow scope; a custom Cosmos DB role only reads and deletes items of one container, exists before its assignments, and one lets the operator delete parked bodies", checkRoles},
	{RuleAppSettings, "app settings give every function.json connection its identity-based settings and hold no key", checkAppSettings},
	{RuleEntities, "every queue, topic and container a function.json names is declared", checkEntities},
	{RuleFlexSiteConfig, "a site that can run on Flex Consumption sends Flex only the siteConfig properties Flex accepts", checkFlexSiteConfig},
	{RuleScaler, "the app holds Service Bus Data Owner on its trigger queue (target-based scaling) and nowhere else", checkScaler},
	{RuleAlerts, "the parking queue's ActiveMessages metric (never sampled) has an alert; DeadletteredMessages of the orders and the parking queue have an alert and a workbook chart; with HTTP functions, log alerts on their 5xx rate and on reused Idempotency-Keys", checkAlerts},
	{RuleParkedLifetime, "a parked body (orders.ParkedBodyTTL) never expires before an envelope that points at it, and no envelope vanishes while its body stays: the parking queue keeps the unlimited time to live (ADR 0013); every bodyRef the handler builds names a parked body, never a document that expires", checkParkedLifetime},
	{RuleNetwork, "vnetEnabled exists; private endpoints for blob, queue, table and Cosmos DB each have a DNS zone group, zones are linked, public access follows the switch, the site integrates, the subnet delegation matches the plan", checkNetwork},
	{RuleIndexing, "the orders and idempotency-keys containers index only the paths a query filters on (orders: /orderId/?, /type/?; idempotency-keys: none) and exclude /*", checkIndexing},
	{RuleHTTPAuth, "every httpTrigger has authLevel function; sites are HTTPS-only with TLS 1.2+; App Service Authentication, when declared, answers 401 without a valid Entra ID token on every plan", checkHTTPAuth},
	{RuleContainers, "every container a setting names (COSMOS_CONTAINER, IDEMPOTENCY_CONTAINER) is declared with the partition key the code relies on, TTL on, and a Cosmos DB data role covering it", checkContainers},
	{RuleHandlerSettings, "the handler's app settings are read by cmd/handler (envconfig) and documented in docs/contract.md §2, required ones are set, literals parse and do not restate the handler's default, and the HTTP API's clocks pass the handler's start checks (internal/clocks: IDEMPOTENCY_KEY_TTL >= IDEMPOTENCY_LEASE, SUBMIT_DEADLINE plus idempotency.FinishTimeout within the lease's share, the deadline within functionTimeout's)", checkHandlerSettings},
	{RuleCosmosLock, "Cosmos DB role assignments in a loop carry @batchSize(1), and the Cosmos DB private endpoint depends on them (each takes the account's exclusive lock; a parallel one fails with 412)", checkCosmosLock},
	{RuleScaleMonitoring, "a VNet-integrated site sets functionsRuntimeScaleMonitoringEnabled in its Elastic Premium siteConfig (never on Flex Consumption)", checkScaleMonitoring},
	{RuleCosmosDurability, "the Cosmos DB account has continuous backup and enableMultipleWriteLocations: false (one write region keeps create-as-claim a uniqueness check)", checkCosmosDurability},
	{RuleLocalStack, "local/compose.yaml parses and runs every emulator on loopback; the Service Bus emulator declares every Bicep queue and topic with the same duplicate detection, delivery count and lock, and every function.json entity", checkLocalStack},
	{RuleParamBounds, "every parameter that feeds a bounded platform property (Flex maximum instances, Linux Elastic Premium workers, Flex instance memory, Elastic Premium SKU, Cosmos DB autoscale maximum, Log Analytics retention) declares bounds within Azure's, and its default lies within them", checkParamBounds},
	{RuleCosmosRegions, "a Cosmos DB account that may be serverless declares exactly one location: a serverless account cannot have a read region", checkCosmosRegions},
	{RuleVNetPaths, "with VNet integration every trigger source (Service Bus for serviceBusTrigger, Cosmos DB for cosmosDBTrigger, host storage) has a path from the integration subnet: a private endpoint (Service Bus: Premium only), or its public endpoint, open in VNet mode, through a NAT gateway on that subnet", checkVNetPaths},
}

func checkSyntax(p *Project) []Finding {
	var out []Finding
	for _, f := range p.Files {
		out = append(out, f.Syntax...)
	}
	return out
}

func checkLocalAuth(p *Project) []Finding {
	required := []struct {
		typ, prop string
		want      bool
		why       string
	}{
		{typeNamespace, "disableLocalAuth", true, "SAS keys would bypass Entra ID"},
		{typeCosmosAccount, "disableLocalAuth", true, "account keys would bypass Entra ID"},
		{typeAppInsights, "DisableLocalAuth", true, "instrumentation-key ingestion would accept anyone's telemetry"},
		{typeStorage, "allowSharedKeyAccess", false, "account keys would bypass Entra ID"},
	}
	var out []Finding
	for _, req := range required {
		for _, l := range p.resources(req.typ) {
			if !l.Body.Get("properties", req.prop).IsBool(req.want) {
				out = append(out, l.finding(RuleLocalAuth, "%s %s: properties.%s must be %t: %s", req.typ, l.Symbol, req.prop, req.want, req.why))
			}
		}
	}
	for _, typ := range []string{typeNamespace, typeCosmosAccount} {
		if len(p.resources(typ)) == 0 {
			out = append(out, Finding{Rule: RuleLocalAuth, File: p.Files[0].Path, Line: 1, Message: "no " + typ + " is declared, so its local auth cannot be checked"})
		}
	}
	return out
}

func checkOrdersQueue(p *Project) []Finding {
	q, ok := p.named(typeQueue, appconfig.OrdersQueue)
	if !ok {
		return []Finding{{Rule: RuleOrdersQueue, File: p.Files[0].Path, Line: 1, Message: fmt.Sprintf("no Service Bus queue named %q is declared", appconfig.OrdersQueue)}}
	}
	props := q.Body.Get("properties")
	var out []Finding
	if !props.Get("requiresDuplicateDetection").IsBool(true) {
		out = append(out, q.finding(RuleOrdersQueue, "requiresDuplicateDetection must be true (producers set MessageId = orderId:bodyhash, contract §3; it cannot be switched on after creation)"))
	}
	if budget, from := p.retryBudget(); !hasText(props.Get("maxDeliveryCount"), strconv.Itoa(budget+1)) {
		out = append(out, q.finding(RuleOrdersQueue, "maxDeliveryCount must be %d: the handler's retry budget (%s, docs/contract.md §5) parks at delivery %d, before the broker dead-letters without a reason", budget+1, from, budget))
	}
	if !props.Get("deadLetteringOnMessageExpiration").IsBool(true) {
		out = append(out, q.finding(RuleOrdersQueue, "deadLetteringOnMessageExpiration must be true: an expired order must not vanish"))
	}
	out = append(out, durationBetween(q, "duplicateDetectionHistoryTimeWindow", props, 20, 7*24*3600)...)
	out = append(out, durationBetween(q, "lockDuration", props, 5, 5*60)...)
	return append(out, p.lockAsHandlerKnowsIt(q, props)...)
}

// lockAsHandlerKnowsIt: the handler fits BATCH_DEADLINE in the queue's lock duration, which it
// reads from QUEUE_LOCK_DURATION (the deployment's literal, else its default), not from the
// queue. A lock changed in the template alone would leave the handler checking against another.
func (p *Project) lockAsHandlerKnowsIt(q located, props *Value) []Finding {
	const setting = "QUEUE_LOCK_DURATION"
	text := ""
	if s, ok := p.appSettings(); ok {
		if v, set := s.values[setting]; set {
			text = p.literalAcross(s.file, v)
		}
	}
	if h := p.App.HandlerSetting(setting); text == "" && h != nil {
		text = h.Default
	}
	handler, err := time.ParseDuration(text)
	queue, ok := isoSeconds(q.File.Literal(props.Get("lockDuration")))
	if err != nil || !ok || handler == time.Duration(queue)*time.Second {
		return nil // computed or unknown on one side, or they agree
	}
	return []Finding{q.finding(RuleOrdersQueue, "lockDuration is %ds but the handler takes the lock for %s (%s): it fits BATCH_DEADLINE in that; set the two together", queue, handler, setting)}
}

// retryBudget is the delivery count from which the handler parks a transient failure, with
// where it comes from: the deployment's RETRY_BUDGET_DELIVERY_COUNT when a literal, else the
// handler's default. A computed setting (main.bicep derives it from maxDeliveryCount) agrees
// by construction in Azure; the default must then agree too, or local runs and chaos would
// park at another delivery than Azure.
func (p *Project) retryBudget() (int, string) {
	const setting = "RETRY_BUDGET_DELIVERY_COUNT"
	if s, ok := p.appSettings(); ok {
		if v, set := s.values[setting]; set {
			if n, err := strconv.Atoi(p.literalAcross(s.file, v)); err == nil {
				return n, "app setting " + setting
			}
		}
	}
	if h := p.App.HandlerSetting(setting); h != nil {
		if n, err := strconv.Atoi(h.Default); err == nil {
			return n, "the default of " + setting
		}
	}
	return orders.DefaultRetryBudget, "orders.DefaultRetryBudget"
}

func hasText(v *Value, text string) bool { return v != nil && v.Text == text }

// durationBetween checks an ISO 8601 duration property (literal, or a parameter default) lies in
// [min, max] seconds.
func durationBetween(q located, prop string, props *Value, min, max int) []Finding {
	v := props.Get(prop)
	if v == nil {
		return []Finding{q.finding(RuleOrdersQueue, "%s must be set", prop)}
	}
	s := q.File.Literal(v)
	if s == "" {
		return nil // computed: only the real compiler and ARM can judge it
	}
	secs, ok := isoSeconds(s)
	if !ok || secs < min || secs > max {
		return []Finding{q.finding(RuleOrdersQueue, "%s %q must be an ISO 8601 duration between %ds and %ds", prop, s, min, max)}
	}
	return nil
}

// isoSeconds reads an ISO 8601 duration (package isoduration).
func isoSeconds(s string) (int, bool) { return isoduration.Seconds(s) }

func checkPartitionKey(p *Project) []Finding {
	var out []Finding
	c, ok := p.named(typeContainer, "orders")
	if !ok {
		return []Finding{{Rule: RulePartitionKey, File: p.Files[0].Path, Line: 1, Message: `no Cosmos DB container named "orders" is declared`}}
	}
	res := c.Body.Get("properties", "resource")
	if paths := literalStrings(c.File, res.Get("partitionKey", "paths")); len(paths) != 1 || paths[0] != "/orderId" {
		out = append(out, c.finding(RulePartitionKey, "partitionKey.paths is %v, want [/orderId]: id = partition key = orderId makes the create a claim (409 on a second create)", paths))
	}
	if k := res.Get("partitionKey", "kind"); k != nil && c.File.Literal(k) != "Hash" {
		out = append(out, c.finding(RulePartitionKey, "partitionKey.kind must be Hash"))
	}
	if ttl := res.Get("defaultTtl"); ttl == nil || strings.ReplaceAll(ttl.Text, " ", "") != "-1" {
		out = append(out, c.finding(RulePartitionKey, "defaultTtl must be -1: TTL on, orders never expire, records with their own ttl do"))
	}
	return out
}

// literalStrings returns the literal strings of an array value; nil if v is not an array.
func literalStrings(f *File, v *Value) []string {
	if v == nil || v.Kind != KindArray {
		return nil
	}
	var out []string
	for _, item := range v.Items {
		out = append(out, f.Literal(item))
	}
	return out
}

var (
	secretName = regexp.MustCompile(`(?i)key|secret|password|passwd|connectionstring|connstr|sas|token|credential`)
	secretExpr = regexp.MustCompile(`(?i)list[a-z]*keys|listConnectionStrings|listCredentials|listSecrets|listAccountSas|listServiceSas|primaryKey|secondaryKey|connectionString|AccountKey=|SharedAccessKey|InstrumentationKey`)
	keyListing = regexp.MustCompile(`(?i)(^|\.)list[A-Za-z]*$`)
)

func checkSecrets(p *Project) []Finding {
	var out []Finding
	for _, f := range p.Files {
		for _, o := range f.Outputs {
			at := Finding{Rule: RuleSecrets, File: f.Path, Line: o.Line}
			switch {
			case secretName.MatchString(o.Name):
				at.Message = fmt.Sprintf("output %s: the name says it carries a secret; outputs are stored in the deployment history in clear", o.Name)
			case o.Value != nil && secretExpr.MatchString(o.Value.Text):
				at.Message = fmt.Sprintf("output %s = %s reads a key or connection string", o.Name, o.Value.Text)
			case strings.HasPrefix(strings.ToLower(o.Type), "secure") || hasDecorator(o.Decorators, "secure"):
				at.Message = fmt.Sprintf("output %s is secure: the deployment must output no secret at all", o.Name)
			default:
				continue
			}
			out = append(out, at)
		}
		for _, c := range f.Calls {
			if keyListing.MatchString(c.Func) {
				out = append(out, Finding{Rule: RuleSecrets, File: f.Path, Line: c.Line, Message: fmt.Sprintf("%s(...) fetches keys; every connection here is identity-based", c.Func)})
			}
		}
	}
	return out
}

func hasDecorator(decorators []string, name string) bool {
	for _, d := range decorators {
		if strings.HasPrefix(strings.TrimPrefix(d, "@"), name+"(") {
			return true
		}
	}
	return false
}

// builtinRoles are the role definitions the deployment may assign, each under the one variable
// key allowed to hold it. Owner, Contributor and Cosmos/storage-wide owner roles are absent on
// purpose; Service Bus Data Owner is here only for the trigger queue's scaler (RuleScaler
// checks where it goes).
var builtinRoles = map[string]struct{ name, key string }{
	"090c5cfd-751d-490a-894a-3ce6f1109419": {"Azure Service Bus Data Owner", "serviceBusDataOwner"},
	"4f6d3b9b-027b-4f4c-9142-0e5a2a2247e0": {"Azure Service Bus Data Receiver", "serviceBusDataReceiver"},
	"69a216fc-b8fb-44d8-bc22-1f3c2cd27a39": {"Azure Service Bus Data Sender", "serviceBusDataSender"},
	"b7e6dc6d-f1e8-4753-8033-0f276bb0955b": {"Storage Blob Data Owner", "storageBlobDataOwner"},
	"ba92f5b4-2d11-453d-a403-e96b0029c9fe": {"Storage Blob Data Contributor", "storageBlobDataContributor"},
	"974c5e8b-45b9-4653-ba55-5f855dd0fb88": {"Storage Queue Data Contributor", "storageQueueDataContributor"},
	"0a9a7e1f-b9d0-4cc4-a60d-0319b160aaa3": {"Storage Table Data Contributor", "storageTableDataContributor"},
	"3913510d-42f4-4e42-8a64-420c390055eb": {"Monitoring Metrics Publisher", "monitoringMetricsPublisher"},
	"00000000-0000-0000-0000-000000000001": {"Cosmos DB Built-in Data Reader", "cosmosDataReader"},
	"00000000-0000-0000-0000-000000000002": {"Cosmos DB Built-in Data Contributor", "cosmosDataContributor"},
}

var guidPattern = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

func checkRoles(p *Project) []Finding {
	keyOwner := map[string]string{}
	for id, r := range builtinRoles {
		keyOwner[strings.ToLower(r.key)] = id
	}
	var out []Finding
	for _, f := range p.Files {
		for _, s := range f.Strings {
			if !guidPattern.MatchString(s.Str) {
				continue
			}
			at := Finding{Rule: RuleRoles, File: f.Path, Line: s.Line}
			role, known := builtinRoles[strings.ToLower(s.Str)]
			switch owner, isRoleKey := keyOwner[strings.ToLower(s.Key)]; {
			case !known:
				at.Message = fmt.Sprintf("%s is not one of the built-in roles this deployment may assign (least privilege: no Owner, Contributor or Data Owner)", s.Str)
			case isRoleKey && owner != strings.ToLower(s.Str):
				at.Message = fmt.Sprintf("%s holds the id of %s, not of %s", s.Key, role.name, builtinRoles[owner].name)
			default:
				continue
			}
			out = append(out, at)
		}
		for _, r := range f.ResourcesOfType(typeRoleAssignment) {
			l := located{f, r}
			scope := r.Body.Get("scope")
			switch {
			case scope == nil:
				out = append(out, l.finding(RuleRoles, "role assignment %s has no scope, so it applies to the whole resource group", r.Symbol))
			case scopeType(f, scope) == typeNamespace:
				out = append(out, l.finding(RuleRoles, "role assignment %s is scoped to the whole Service Bus namespace; scope it to the queue or topic", r.Symbol))
			}
			if strings.Contains(textOf(r.Body.Get("properties", "roleDefinitionId")), "storageBlobDataContributor") && scope != nil && scopeType(f, scope) == typeStorage {
				out = append(out, l.finding(RuleRoles, "role assignment %s gives Blob Data Contributor on the whole storage account; publishing needs it on the package container only", r.Symbol))
			}
			if r.Body.Get("properties", "roleDefinitionId") == nil {
				out = append(out, l.finding(RuleRoles, "role assignment %s has no roleDefinitionId", r.Symbol))
			}
		}
		for _, r := range f.ResourcesOfType(typeSQLRole) {
			if r.Body.Get("properties", "scope") == nil || r.Body.Get("properties", "roleDefinitionId") == nil {
				out = append(out, located{f, r}.finding(RuleRoles, "Cosmos DB role assignment %s needs properties.roleDefinitionId and properties.scope", r.Symbol))
			}
		}
	}
	return append(out, checkCosmosCustomRoles(p)...)
}

// scopeType returns the resource type a `scope:` value refers to, when it names a resource
// symbol of the same file (`scope: queue` or `scope: queues[i]`).
func scopeType(f *File, scope *Value) string {
	symbol, _, _ := strings.Cut(scope.Text, "[")
	for _, r := range f.Resources {
		if r.Symbol == strings.TrimSpace(symbol) {
			return r.Type
		}
	}
	return ""
}
