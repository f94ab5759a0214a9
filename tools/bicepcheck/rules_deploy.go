package bicepcheck

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ordersink/orders-consumer/tools/bicepcheck/appconfig"
)

// Rule ids of the deployment-behaviour rules: what makes a template that compiles still fail
// to provision, scale or alert.
const (
	RuleFlexSiteConfig = "flex-site-config"
	RuleScaler         = "scaler-rights"
	RuleAlerts         = "alerts"
)

const (
	typeSite        = "Microsoft.Web/sites"
	typeMetricAlert = "Microsoft.Insights/metricAlerts"
	typeLogAlert    = "Microsoft.Insights/scheduledQueryRules"
)

// flexSiteConfigKeys are the siteConfig properties a Flex Consumption site accepts as far as
// Microsoft's Flex templates show. ftpsState in particular fails provisioning with ARM error
// 51021 in the regions that enforce it.
var flexSiteConfigKeys = map[string]bool{"minTlsVersion": true, "cors": true}

func checkFlexSiteConfig(p *Project) []Finding {
	var out []Finding
	for _, site := range p.resources(typeSite) {
		props := site.Body.Get("properties")
		if props.Get("functionAppConfig") == nil {
			continue // not a site that can be Flex Consumption
		}
		flex, ok := flexBranch(site.File, props.Get("siteConfig"))
		if !ok {
			out = append(out, site.finding(RuleFlexSiteConfig, "site %s: siteConfig is chosen by %q, not by the hosting plan (isFlex ? flexConfig : premiumConfig)", site.Symbol, props.Get("siteConfig").Cond))
			continue
		}
		if flex == nil || flex.Kind != KindObject {
			continue
		}
		for _, prop := range flex.Props {
			if !flexSiteConfigKeys[prop.Key] {
				out = append(out, site.finding(RuleFlexSiteConfig, "site %s sends siteConfig.%s to Flex Consumption, which rejects it (ARM error 51021 for ftpsState and functionsRuntimeScaleMonitoringEnabled); make siteConfig depend on the plan", site.Symbol, prop.Key))
			}
		}
	}
	return out
}

// flexBranch returns the siteConfig value a Flex Consumption site gets: the value itself when it
// is the same for every plan, or the Flex side of a ternary on the plan. ok is false for a
// ternary on something else.
func flexBranch(f *File, v *Value) (flex *Value, ok bool) {
	flex, _, ok = flexAndPremium(f, v)
	return flex, ok
}

// flexAndPremium splits a value chosen by the hosting plan (isFlex ? a : b, or the plan compared
// with 'FlexConsumption') into what Flex Consumption and Elastic Premium get; a value that is not
// a ternary goes to both. ok is false for a ternary on something else.
func flexAndPremium(f *File, v *Value) (flex, premium *Value, ok bool) {
	v = f.resolve(v)
	if v == nil || v.Kind != KindTernary {
		return v, v, true
	}
	cond := strings.Join(strings.Fields(v.Cond), "")
	switch {
	case cond == "isFlex" || strings.Contains(cond, "=='FlexConsumption'"):
		return f.resolve(v.Items[0]), f.resolve(v.Items[1]), true
	case cond == "!isFlex" || strings.Contains(cond, "!='FlexConsumption'"):
		return f.resolve(v.Items[1]), f.resolve(v.Items[0]), true
	}
	return nil, nil, false
}

// resolve follows an identifier to the variable it names (a few steps at most).
func (f *File) resolve(v *Value) *Value {
	for depth := 0; v != nil && v.Kind == KindExpr && depth < 8; depth++ {
		next := f.lookup(strings.TrimSpace(v.Text))
		if next == nil {
			return v
		}
		v = next
	}
	return v
}

// checkScaler reads the grant tables of the role module (objects with who/queue/role keys, the
// convention of bicep/modules/rbac.bicep): the app identity needs Data Owner on the queue its
// trigger reads, because the Service Bus extension's target-based scaler reads the queue's
// runtime properties, which needs Manage; with Receiver only the scaler reports itself
// unsupported and the fallback sees at most one message. Data Owner anywhere else is too much.
func checkScaler(p *Project) []Finding {
	var out []Finding
	found := false
	for _, f := range p.Files {
		for _, obj := range f.Objects {
			role := obj.Get("role")
			if role == nil || !strings.HasSuffix(strings.TrimSpace(role.Text), ".serviceBusDataOwner") {
				continue
			}
			queue, who := textOf(obj.Get("queue")), textOf(obj.Get("who"))
			at := Finding{Rule: RuleScaler, File: f.Path, Line: obj.Line}
			switch {
			case who != "app":
				at.Message = fmt.Sprintf("Service Bus Data Owner goes to %q: only the app identity needs it, for its trigger's scaler", who)
			case !namesTriggerQueue(f, obj.Get("queue")):
				at.Message = fmt.Sprintf("Service Bus Data Owner on %q: only the queue the trigger reads (%s) needs Manage, for the scaler", queue, appconfig.OrdersQueue)
			default:
				found = true
				continue
			}
			out = append(out, at)
		}
	}
	if !found {
		out = append(out, Finding{Rule: RuleScaler, File: p.Files[0].Path, Line: 1, Message: fmt.Sprintf("no grant gives the app Service Bus Data Owner (roles.serviceBusDataOwner) on the %s queue: the target-based scaler needs Manage and falls back to seeing one message at a time", appconfig.OrdersQueue)})
	}
	return out
}

func textOf(v *Value) string {
	if v == nil {
		return ""
	}
	return strings.TrimSpace(v.Text)
}

// namesTriggerQueue accepts the literal trigger queue name or the parameter that carries it.
func namesTriggerQueue(f *File, v *Value) bool {
	return f.Literal(v) == appconfig.OrdersQueue || textOf(v) == "ordersQueueName"
}

// checkAlerts requires a metric alert on ActiveMessages of the parking queue (Service Bus
// metrics are never sampled, so it fires even when Application Insights drops traces) and, when
// the app has HTTP functions, the HTTP API's log alerts (checkHTTPAPIAlerts).
func checkAlerts(p *Project) []Finding {
	return slices.Concat(checkParkingAlert(p), checkDeadLetterAlert(p), checkHTTPAPIAlerts(p))
}

func checkParkingAlert(p *Project) []Finding {
	for _, a := range p.resources(typeMetricAlert) {
		for _, c := range a.Body.Get("properties", "criteria", "allOf").itemsOrNil() {
			if a.File.Literal(c.Get("metricName")) != "ActiveMessages" {
				continue
			}
			for _, d := range c.Get("dimensions").itemsOrNil() {
				if a.File.Literal(d.Get("name")) != "EntityName" {
					continue
				}
				for _, v := range d.Get("values").itemsOrNil() {
					if a.File.Literal(v) == appconfig.ParkingQueue || textOf(v) == "parkingQueueName" {
						return nil
					}
				}
			}
		}
	}
	return []Finding{{Rule: RuleAlerts, File: p.Files[0].Path, Line: 1, Message: fmt.Sprintf("no metric alert on ActiveMessages with EntityName %s: parked orders would be noticed only through sampled traces", appconfig.ParkingQueue)}}
}

// keyReusedOutcome is the outcome SubmitOrder's request line gives a key reused with another
// payload (docs/contract.md, the HTTP API): the only way to tell it from an invalid
// order, both being 422.
const keyReusedOutcome = `"outcome":"keyReused"`

// checkHTTPAPIAlerts: a log alert on the 5xx answers of every HTTP function (requests, by
// resultCode) and, with SubmitOrder, one on reused Idempotency-Keys (its request line).
func checkHTTPAPIAlerts(p *Project) []Finding {
	var http []string
	for _, fn := range p.App.Functions {
		if t := fn.Trigger(); t != nil && strings.EqualFold(t.Type, "httpTrigger") {
			http = append(http, fn.Name)
		}
	}
	if len(http) == 0 {
		return nil
	}
	var queries []string
	for _, a := range p.resources(typeLogAlert) {
		for _, c := range a.Body.Get("properties", "criteria", "allOf").itemsOrNil() {
			queries = append(queries, a.File.Literal(c.Get("query")))
		}
	}
	errorsCovered, reuseCovered := false, false
	for _, q := range queries {
		if strings.HasPrefix(strings.TrimSpace(q), "requests") && strings.Contains(q, "resultCode") && containsAll(q, http) {
			errorsCovered = true
		}
		reuseCovered = reuseCovered || strings.Contains(q, keyReusedOutcome)
	}
	var out []Finding
	if !errorsCovered {
		out = append(out, Finding{Rule: RuleAlerts, File: p.Files[0].Path, Line: 1, Message: fmt.Sprintf("no log alert on the 5xx answers of the HTTP functions %v (requests by resultCode, every function named)", http)})
	}
	if p.App.Function("SubmitOrder") != nil && !reuseCovered {
		out = append(out, Finding{Rule: RuleAlerts, File: p.Files[0].Path, Line: 1, Message: fmt.Sprintf("no log alert counts SubmitOrder's %s lines: reused Idempotency-Keys (orders refused) would go unnoticed among invalid orders", keyReusedOutcome)})
	}
	return out
}

func containsAll(s string, parts []string) bool {
	for _, part := range parts {
		if !strings.Contains(s, `"`+part+`"`) {
			return false
		}
	}
	return true
}

func (v *Value) itemsOrNil() []*Value {
	if v == nil || v.Kind != KindArray {
		return nil
	}
	return v.Items
}

// RuleIndexing: the orders and idempotency-keys containers index only what a query filters on.
const RuleIndexing = "indexing"

// queriedPaths are, per container, the only paths a query of this repository filters on. The
// orders container: cosmos.Store's PartitionDocuments (orderId) and Documents (type); the hot
// path uses point reads, batches and the change feed, which need no index. idempotency-keys:
// nothing; claim, complete, take-over, release and replay are point operations
// (docs/adr/0012-http-api-decides-in-the-request.md).
var queriedPaths = map[string]map[string]bool{
	"orders":           {"/orderId/?": true, "/type/?": true},
	"idempotency-keys": {},
}

func checkIndexing(p *Project) []Finding {
	if _, ok := p.named(typeContainer, "orders"); !ok {
		return []Finding{{Rule: RuleIndexing, File: p.Files[0].Path, Line: 1, Message: `no Cosmos DB container named "orders" is declared`}}
	}
	var out []Finding
	for _, name := range sortedKeys(queriedPaths) {
		if c, ok := p.named(typeContainer, name); ok {
			out = append(out, checkContainerIndexing(c, queriedPaths[name])...)
		}
	}
	return out
}

// queriedList names the queried paths of a container for a finding.
func queriedList(queried map[string]bool) string {
	if len(queried) == 0 {
		return "none, point operations only"
	}
	return strings.Join(sortedKeys(queried), ", ")
}

func checkContainerIndexing(c located, queried map[string]bool) []Finding {
	name := c.Name()
	policy := c.Body.Get("properties", "resource", "indexingPolicy")
	if policy == nil {
		return []Finding{c.finding(RuleIndexing, "the %s container has no indexingPolicy: by default every path is indexed and every write pays for it", name)}
	}
	var out []Finding
	excludesAll := false
	for _, e := range policy.Get("excludedPaths").itemsOrNil() {
		if c.File.Literal(e.Get("path")) == "/*" {
			excludesAll = true
		}
	}
	if !excludesAll {
		out = append(out, c.finding(RuleIndexing, "%s: indexingPolicy.excludedPaths must hold /*: only queried paths are indexed", name))
	}
	for _, i := range policy.Get("includedPaths").itemsOrNil() {
		if path := c.File.Literal(i.Get("path")); !queried[path] {
			out = append(out, c.finding(RuleIndexing, "%s: indexingPolicy includes %s, which no query filters on (queried: %s)", name, path, queriedList(queried)))
		}
	}
	if mode := c.File.Literal(policy.Get("indexingMode")); mode != "consistent" {
		out = append(out, c.finding(RuleIndexing, "%s: indexingMode is %q, want consistent", name, mode))
	}
	return out
}
