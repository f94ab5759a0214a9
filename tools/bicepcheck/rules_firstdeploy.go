package bicepcheck

import (
	"path/filepath"
	"slices"
	"strings"
)

// Rule ids of what makes a first deployment fail or a deployed app not scale, though the
// template compiles.
const (
	RuleCosmosLock       = "cosmos-lock"
	RuleScaleMonitoring  = "scale-monitoring"
	scaleMonitoringKey   = "functionsRuntimeScaleMonitoringEnabled"
	cosmosPrivateLinkSQL = "Sql"
)

// checkCosmosLock: Cosmos DB takes an account-wide exclusive lock for each sqlRoleAssignment and
// for a private endpoint connection, and refuses a second operation meanwhile with 412. So a loop
// of role assignments runs one at a time (@batchSize(1)), and the private endpoint on the
// account (group Sql) is ordered after them.
func checkCosmosLock(p *Project) []Finding {
	var out []Finding
	var roleFiles []*File
	for _, l := range p.resources(typeSQLRole) {
		if !slices.Contains(roleFiles, l.File) {
			roleFiles = append(roleFiles, l.File)
		}
		if l.Loop && !slices.ContainsFunc(l.Decorators, isBatchSizeOne) {
			out = append(out, l.finding(RuleCosmosLock, "Cosmos DB role assignments %s are created in parallel: add @batchSize(1), or the second one fails with 412 (another operation holds the account's exclusive lock)", l.Symbol))
		}
	}
	for _, pe := range p.resources(typePrivateEndpoint) {
		if !slices.Contains(literalsIn(pe.File, pe.Body), cosmosPrivateLinkSQL) && !fileDeclaresCosmosEndpoint(pe.File) {
			continue
		}
		for _, rf := range roleFiles {
			if !p.orderedAfter(pe, rf) {
				out = append(out, pe.finding(RuleCosmosLock, "the Cosmos DB private endpoint %s is not ordered after the role assignments of %s (dependsOn): the two take the account's exclusive lock and the later one fails with 412", pe.Symbol, filepath.Base(rf.Path)))
			}
		}
	}
	return out
}

func isBatchSizeOne(d string) bool {
	return strings.ReplaceAll(d, " ", "") == "@batchSize(1)"
}

// fileDeclaresCosmosEndpoint: network.bicep builds its endpoints from a table variable, so the
// group id is a literal of the file, not of the endpoint's body.
func fileDeclaresCosmosEndpoint(f *File) bool {
	for _, s := range f.Strings {
		if s.Key == "groupId" && s.Str == cosmosPrivateLinkSQL {
			return true
		}
	}
	return false
}

// literalsIn returns the literal strings of an object, nested values included.
func literalsIn(f *File, v *Value) []string {
	if v == nil {
		return nil
	}
	var out []string
	if s := f.Literal(v); s != "" {
		out = append(out, s)
	}
	for _, prop := range v.Props {
		out = append(out, literalsIn(f, prop.Value)...)
	}
	for _, it := range v.Items {
		out = append(out, literalsIn(f, it)...)
	}
	return out
}

// orderedAfter reports whether the resource r is deployed after everything in the file roles:
// in the same file, r depends on the role assignments; otherwise the module that deploys r's
// file depends on the module that deploys roles.
func (p *Project) orderedAfter(r located, roles *File) bool {
	if r.File == roles {
		for _, d := range r.Body.Get("dependsOn").itemsOrNil() {
			for _, ra := range roles.ResourcesOfType(typeSQLRole) {
				if textOf(d) == ra.Symbol {
					return true
				}
			}
		}
		return false
	}
	for _, f := range p.Files {
		rolesModule, endpointModule := p.moduleOf(f, roles), p.moduleOf(f, r.File)
		if rolesModule == nil || endpointModule == nil {
			continue
		}
		return slices.ContainsFunc(endpointModule.Body.Get("dependsOn").itemsOrNil(), func(d *Value) bool { return textOf(d) == rolesModule.Symbol })
	}
	return false
}

// moduleOf returns the module declaration of f that deploys target, or nil.
func (p *Project) moduleOf(f, target *File) *Module {
	for i, m := range f.Modules {
		if p.file(filepath.Join(filepath.Dir(f.Path), m.Path)) == target {
			return &f.Modules[i]
		}
	}
	return nil
}

// checkScaleMonitoring: on Elastic Premium with VNet integration the scale controller cannot
// see trigger sources behind the network, so the app stays on its prewarmed instance unless
// runtime scale monitoring is on (siteConfig.functionsRuntimeScaleMonitoringEnabled). Flex
// Consumption rejects the property (ARM error 51021; rule flex-site-config), so it goes in the
// Elastic Premium side of the plan's siteConfig only.
func checkScaleMonitoring(p *Project) []Finding {
	var out []Finding
	for _, site := range p.resources(typeSite) {
		props := site.Body.Get("properties")
		if props.Get("virtualNetworkSubnetId") == nil {
			continue // no VNet integration, nothing hidden from the scale controller
		}
		_, premium, ok := flexAndPremium(site.File, props.Get("siteConfig"))
		if !ok {
			continue // rule flex-site-config reports a siteConfig not chosen by the plan
		}
		v := premium.Get(scaleMonitoringKey)
		if v == nil || !(v.IsBool(true) || strings.Contains(strings.ToLower(textOf(v)), "vnet")) {
			out = append(out, site.finding(RuleScaleMonitoring, "site %s integrates with a VNet but its Elastic Premium siteConfig does not set %s: true (or on the VNet switch): triggers behind private endpoints would never scale out beyond the prewarmed instance", site.Symbol, scaleMonitoringKey))
		}
	}
	return out
}
