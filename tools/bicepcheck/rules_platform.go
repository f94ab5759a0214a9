package bicepcheck

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Rules that keep the template within what the platform accepts and what the runbook promises:
// parameter bounds no wider than Azure's, no read region on a serverless Cosmos DB account, and
// in VNet mode a network path from the app to every trigger's source.
const (
	RuleParamBounds   = "param-bounds"
	RuleCosmosRegions = "cosmos-regions"
	RuleVNetPaths     = "vnet-paths"
)

const typeNATGateway = "Microsoft.Network/natGateways"

// platformBound is what Azure accepts for the property a parameter feeds, with where Microsoft
// says so. A parameter may be narrower (a project choice), never wider: a value Azure refuses
// would fail the deployment, or (a maximum past a plan's) promise a scale the plan never gives.
type platformBound struct {
	param    string
	min, max int      // 0: no bound on that side
	step     int      // the default must be a multiple; 0: any
	allowed  []string // the values Azure offers; nil: a range
	property string
	source   string
}

var platformBounds = []platformBound{
	{param: "flexMaximumInstanceCount", min: 1, max: 1000, property: "Flex Consumption functionAppConfig.scaleAndConcurrency.maximumInstanceCount",
		source: "learn.microsoft.com/azure/azure-functions/event-driven-scaling#limit-scale-out (1 to 1000; below 40 rolled out region by region from January 2026, Azure/azure-functions-host#10523)"},
	{param: "maximumElasticWorkerCount", min: 1, max: 20, property: "Linux Elastic Premium serverfarms maximumElasticWorkerCount",
		source: "learn.microsoft.com/azure/azure-functions/functions-premium-plan#region-max-scale-out (Linux: 20 per plan in every region; more only by a support request)"},
	{param: "flexInstanceMemoryMB", allowed: []string{"512", "2048", "4096"}, property: "Flex Consumption instanceMemoryMB",
		source: "learn.microsoft.com/azure/azure-functions/flex-consumption-plan#instance-memory"},
	{param: "elasticPremiumSku", allowed: []string{"EP1", "EP2", "EP3"}, property: "Elastic Premium SKU",
		source: "learn.microsoft.com/azure/azure-functions/functions-premium-plan#available-instance-skus"},
	{param: "cosmosAutoscaleMaxThroughput", min: 1000, step: 1000, property: "Cosmos DB autoscale maxThroughput",
		source: "learn.microsoft.com/azure/cosmos-db/autoscale-faq (from 1,000 RU/s, in steps of 1,000)"},
	{param: "logRetentionDays", min: 30, max: 730, property: "Log Analytics workspace retentionInDays",
		source: "learn.microsoft.com/azure/azure-monitor/logs/data-retention-configure (30 days by default, up to two years)"},
}

func checkParamBounds(p *Project) []Finding {
	var out []Finding
	for _, f := range p.Files {
		for _, prm := range f.Params {
			i := slices.IndexFunc(platformBounds, func(b platformBound) bool { return b.param == prm.Name })
			if i < 0 {
				continue
			}
			b := platformBounds[i]
			at := Finding{Rule: RuleParamBounds, File: f.Path, Line: prm.Line}
			for _, problem := range b.problems(prm, !p.isModule(f)) {
				out = append(out, with(at, fmt.Sprintf("param %s: %s; %s: %s", prm.Name, problem, b.property, b.source)))
			}
		}
	}
	return out
}

// problems lists how prm's bounds exceed Azure's. A parameter of the entry file must declare its
// bounds (callers pass anything); a module's, fed by the entry file's, is judged only on the
// bounds it declares.
func (b platformBound) problems(prm Param, entry bool) []string {
	allowed, hasAllowed := decoratorArg(prm.Decorators, "allowed")
	values := allowedValues(allowed)
	var out []string
	if b.allowed != nil {
		if !hasAllowed && !entry {
			return nil
		}
		if !hasAllowed {
			return []string{fmt.Sprintf("declares no @allowed, so Azure's refusal of anything but %v would surface only at deployment", b.allowed)}
		}
		for _, v := range values {
			if !slices.Contains(b.allowed, v) {
				out = append(out, fmt.Sprintf("@allowed holds %s, which Azure does not offer (it offers %v)", v, b.allowed))
			}
		}
		return out
	}
	lo, hasLo := intDecorator(prm.Decorators, "minValue")
	hi, hasHi := intDecorator(prm.Decorators, "maxValue")
	switch {
	case !hasLo && !hasAllowed && entry:
		out = append(out, fmt.Sprintf("declares no @minValue; Azure's minimum is %d", b.min))
	case hasLo && lo < b.min:
		out = append(out, fmt.Sprintf("@minValue(%d) accepts values below Azure's minimum %d", lo, b.min))
	}
	if b.max > 0 {
		switch {
		case !hasHi && !hasAllowed && entry:
			out = append(out, fmt.Sprintf("declares no @maxValue; Azure's maximum is %d", b.max))
		case hasHi && hi > b.max:
			out = append(out, fmt.Sprintf("@maxValue(%d) accepts values above Azure's maximum %d", hi, b.max))
		}
	}
	for _, v := range values {
		if n, err := strconv.Atoi(v); err != nil || n < b.min || b.max > 0 && n > b.max {
			out = append(out, fmt.Sprintf("@allowed holds %s, outside Azure's %d to %d", v, b.min, b.max))
		}
	}
	if prm.Default != nil && prm.Default.Kind == KindNumber {
		n, err := strconv.Atoi(strings.TrimSpace(prm.Default.Text))
		switch {
		case err != nil:
		case n < b.min || b.max > 0 && n > b.max:
			out = append(out, fmt.Sprintf("the default %d is outside Azure's %d to %d", n, b.min, b.max))
		case b.step > 0 && n%b.step != 0:
			out = append(out, fmt.Sprintf("the default %d is not a multiple of %d", n, b.step))
		}
	}
	return out
}

// decoratorArg returns the argument text of the decorator @name(...) and whether it is there.
func decoratorArg(decorators []string, name string) (string, bool) {
	for _, d := range decorators {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(d), "@"+name+"("); ok {
			return strings.TrimSuffix(strings.TrimSpace(rest), ")"), true
		}
	}
	return "", false
}

func intDecorator(decorators []string, name string) (int, bool) {
	arg, ok := decoratorArg(decorators, name)
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(strings.TrimSpace(arg))
	return n, err == nil
}

// allowedValues reads the literals of an @allowed([...]) argument.
func allowedValues(arg string) []string {
	arg = strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(arg), "["), "]")
	var out []string
	for _, v := range strings.FieldsFunc(arg, func(r rune) bool { return r == '\n' || r == ' ' || r == '\t' || r == ',' || r == '\r' }) {
		out = append(out, strings.Trim(v, "'"))
	}
	return out
}

// checkCosmosRegions: a serverless account runs in one region and no region can be added to it
// (learn.microsoft.com/azure/cosmos-db/serverless), so an account that may be serverless declares
// exactly one location; a read region needs provisioned throughput (docs/adr/0014).
func checkCosmosRegions(p *Project) []Finding {
	var out []Finding
	for _, a := range p.resources(typeCosmosAccount) {
		props := a.Body.Get("properties")
		caps, locs := props.Get("capabilities"), props.Get("locations")
		if caps == nil || !strings.Contains(caps.Text, "EnableServerless") {
			continue
		}
		if serverlessLocations(caps, locs) == 1 {
			continue
		}
		out = append(out, a.finding(RuleCosmosRegions, "Cosmos DB account %s may be serverless (capability EnableServerless) but declares locations %s: a serverless account runs in exactly one region and no read region can be added (learn.microsoft.com/azure/cosmos-db/serverless); a read region needs provisioned throughput (docs/adr/0014-single-write-region.md)", a.Symbol, oneLine(textOf(locs))))
	}
	return out
}

// serverlessLocations is how many locations the account has when it is serverless: the items
// of a literal array, or of the branch of a ternary on the same condition as the capabilities'
// that holds EnableServerless; -1 when it cannot be told.
func serverlessLocations(caps, locs *Value) int {
	if locs == nil {
		return -1
	}
	if locs.Kind == KindArray {
		return len(locs.Items)
	}
	if locs.Kind == KindTernary && caps.Kind == KindTernary && strings.TrimSpace(locs.Cond) == strings.TrimSpace(caps.Cond) {
		for i, branch := range caps.Items {
			if strings.Contains(branch.Text, "EnableServerless") && locs.Items[i].Kind == KindArray {
				return len(locs.Items[i].Items)
			}
		}
	}
	return -1
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 80 {
		s = s[:80] + "..."
	}
	return s
}

// triggerSource is one service a VNet-integrated app must reach for its triggers to fire.
type triggerSource struct {
	name, typ, group string // display name, resource type, private-endpoint group id
	needed           func(*Project) bool
}

var triggerSources = []triggerSource{
	{"Service Bus", typeNamespace, "namespace", func(p *Project) bool { return p.hasTrigger("serviceBusTrigger") }},
	{"Cosmos DB", typeCosmosAccount, "Sql", func(p *Project) bool { return p.hasTrigger("cosmosDBTrigger") }},
	// The host itself: locks, keys, timers, the scale monitors' state (AzureWebJobsStorage).
	{"host storage", typeStorage, "blob", func(*Project) bool { return true }},
}

func (p *Project) hasTrigger(typ string) bool {
	if p.App == nil {
		return false
	}
	for _, fn := range p.App.Functions {
		for _, b := range fn.Bindings {
			if strings.EqualFold(b.Type, typ) {
				return true
			}
		}
	}
	return false
}

// checkVNetPaths: with VNet integration the app's outbound traffic leaves through the integration
// subnet, so each trigger source needs a path from there: a private endpoint (Service Bus: only on
// the Premium tier), or its public endpoint, open in VNet mode, reached through a NAT gateway on
// the integration subnet. New subnets are private by default (API 2025-07-01 and later: no
// default outbound access), and Microsoft's default outbound IP is not for production; without
// either path the triggers never fire and nothing alarms.
func checkVNetPaths(p *Project) []Finding {
	var out []Finding
	integrated := slices.ContainsFunc(p.resources(typeSite), func(s located) bool {
		return s.Body.Get("properties", "virtualNetworkSubnetId") != nil
	})
	if !integrated {
		return nil
	}
	groups := p.privateEndpointGroups()
	nat := p.integrationSubnetHasNAT()
	for _, src := range triggerSources {
		if !src.needed(p) {
			continue
		}
		for _, r := range p.resources(src.typ) {
			if groups[src.group] {
				if src.typ == typeNamespace && !strings.Contains(textOf(r.Body.Get("sku", "name")), "Premium") {
					out = append(out, r.finding(RuleVNetPaths, "Service Bus namespace %s has a private endpoint (group namespace) but is not Premium: private endpoints need the Premium tier (learn.microsoft.com/azure/service-bus-messaging/private-link-service)", r.Symbol))
				}
				continue
			}
			if nat && p.publicInVNetMode(r) {
				continue
			}
			why := "its public endpoint is closed in VNet mode and it has no private endpoint (group " + src.group + ")"
			if !nat {
				why = "no private endpoint (group " + src.group + ") and no NAT gateway on the integration subnet to reach its public endpoint"
			}
			out = append(out, r.finding(RuleVNetPaths, "VNet mode has no path to %s (%s): %s, so its triggers never fire", src.name, r.Symbol, why))
		}
	}
	return out
}

// integrationSubnetHasNAT: a NAT gateway is declared and a subnet delegated to the app (the
// object that holds delegations) names it.
func (p *Project) integrationSubnetHasNAT() bool {
	if len(p.resources(typeNATGateway)) == 0 {
		return false
	}
	for _, f := range p.Files {
		for _, obj := range f.Objects {
			if obj.Get("delegations") != nil && obj.Get("natGateway") != nil {
				return true
			}
		}
	}
	return false
}

// publicInVNetMode: the resource's publicNetworkAccess is Enabled when vnetEnabled is true:
// missing (Azure's default), the literal Enabled, or the vnetEnabled branch of the switch, followed
// through variables and the parameters its module callers pass. Anything this reader cannot
// follow counts as closed, so a NAT gateway alone does not pass for a path.
func (p *Project) publicInVNetMode(r located) bool {
	f, v := r.File, r.Body.Get("properties", "publicNetworkAccess")
	if v == nil {
		return true
	}
	for depth := 0; v != nil && depth < 16; depth++ {
		switch v.Kind {
		case KindString:
			return v.Str == "Enabled"
		case KindTernary:
			if strings.TrimSpace(v.Cond) != "vnetEnabled" {
				return false
			}
			v = v.Items[0]
			continue
		case KindExpr:
		default:
			return false
		}
		name := strings.TrimSpace(v.Text)
		if passed, from, ok := p.passedParam(f, name); ok {
			f, v = from, passed // nil when the callers disagree: closed
			continue
		}
		v = f.lookup(name)
	}
	return false
}

// isModule reports whether some file of the project deploys f as a module.
func (p *Project) isModule(f *File) bool {
	for _, g := range p.Files {
		if p.moduleOf(g, f) != nil {
			return true
		}
	}
	return false
}
