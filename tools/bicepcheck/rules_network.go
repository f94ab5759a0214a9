package bicepcheck

import (
	"fmt"
	"strings"
)

// RuleNetwork checks the private-networking switch (main.bicep vnetEnabled, modules/network.bicep).
const RuleNetwork = "network"

const (
	typePrivateEndpoint = "Microsoft.Network/privateEndpoints"
	typeZoneGroup       = "Microsoft.Network/privateEndpoints/privateDnsZoneGroups"
	typeDNSZone         = "Microsoft.Network/privateDnsZones"
	typeZoneLink        = "Microsoft.Network/privateDnsZones/virtualNetworkLinks"
	typeVNet            = "Microsoft.Network/virtualNetworks"
)

// privateGroups are the private-endpoint sub-resources the app needs: the host keeps its
// locks, keys and timers in blob storage and its diagnostic events in table storage; the
// handler and the Cosmos DB trigger reach Cosmos DB on Sql. The host uses queue storage only
// for blob triggers, Durable Functions and storage-queue bindings, none of which the app has
// (Microsoft's table for AzureWebJobsStorage with an identity, functions-reference).
var privateGroups = []string{"blob", "table", "Sql"}

// storageQueueDataContributor is the role a queue endpoint would need to be of any use.
const storageQueueDataContributor = "974c5e8b-45b9-4653-ba55-5f855dd0fb88"

func checkNetwork(p *Project) []Finding {
	var out []Finding
	first := Finding{Rule: RuleNetwork, File: p.Files[0].Path, Line: 1}
	if !p.hasParam("vnetEnabled") {
		out = append(out, with(first, "no file declares param vnetEnabled: private networking must be one switch"))
	}
	endpoints := p.resources(typePrivateEndpoint)
	if len(endpoints) == 0 {
		out = append(out, with(first, "no Microsoft.Network/privateEndpoints is declared"))
	}
	for _, pe := range endpoints {
		if !p.hasChild(pe, typeZoneGroup) {
			out = append(out, pe.finding(RuleNetwork, "private endpoint %s has no privateDnsZoneGroups child: the service's public name would not resolve to it", pe.Symbol))
		}
	}
	for _, z := range p.resources(typeDNSZone) {
		if !p.hasChild(z, typeZoneLink) {
			out = append(out, z.finding(RuleNetwork, "private DNS zone %s is linked to no virtual network", z.Symbol))
		}
	}
	groups := p.privateEndpointGroups()
	for _, g := range privateGroups {
		if !groups[g] {
			out = append(out, with(first, fmt.Sprintf("no private endpoint for group %q", g)))
		}
	}
	if groups["queue"] && !p.assignsRole(storageQueueDataContributor) {
		out = append(out, with(first, "a private endpoint for storage group \"queue\", but no role lets the app use queue storage (Storage Queue Data Contributor): the host needs it only for blob triggers, Durable Functions and queue bindings; drop the endpoint or grant the role"))
	}
	// Where a private endpoint exists, public access must be off when the switch is on.
	for _, typ := range []string{typeStorage, typeCosmosAccount} {
		for _, r := range p.resources(typ) {
			v := r.Body.Get("properties", "publicNetworkAccess")
			if v == nil || r.File.Literal(v) == "Enabled" && v.Kind == KindString {
				out = append(out, r.finding(RuleNetwork, "%s %s: publicNetworkAccess is fixed to Enabled; it must follow vnetEnabled (Disabled behind private endpoints)", typ, r.Symbol))
			}
		}
	}
	if !p.switchesPublicAccess() {
		out = append(out, with(first, "no value `vnetEnabled ? 'Disabled' : 'Enabled'` feeds publicNetworkAccess"))
	}
	for _, site := range p.resources(typeSite) {
		if site.Body.Get("properties", "virtualNetworkSubnetId") == nil {
			out = append(out, site.finding(RuleNetwork, "site %s has no virtualNetworkSubnetId: its outbound traffic would not reach the private endpoints", site.Symbol))
		}
	}
	return append(out, p.checkDelegations()...)
}

func with(f Finding, msg string) Finding { f.Message = msg; return f }

func (p *Project) hasParam(name string) bool {
	for _, f := range p.Files {
		for _, prm := range f.Params {
			if prm.Name == name {
				return true
			}
		}
	}
	return false
}

// hasChild reports whether some resource of childType names parent as its parent (parent:
// symbol or symbol[i]).
func (p *Project) hasChild(parent located, childType string) bool {
	for _, c := range parent.File.ResourcesOfType(childType) {
		ref, _, _ := strings.Cut(textOf(c.Body.Get("parent")), "[")
		if ref == parent.Symbol {
			return true
		}
	}
	return false
}

// privateEndpointGroups collects the groupId literals of the endpoint table objects and of
// groupIds arrays.
func (p *Project) privateEndpointGroups() map[string]bool {
	groups := map[string]bool{}
	for _, f := range p.Files {
		for _, obj := range f.Objects {
			if g := f.Literal(obj.Get("groupId")); g != "" {
				groups[g] = true
			}
			for _, g := range literalStrings(f, obj.Get("groupIds")) {
				groups[g] = true
			}
		}
	}
	return groups
}

// switchesPublicAccess finds `vnetEnabled ? 'Disabled' : 'Enabled'` in some file.
func (p *Project) switchesPublicAccess() bool {
	for _, f := range p.Files {
		for _, v := range f.Vars {
			if isPublicAccessSwitch(f, v.Value) {
				return true
			}
		}
		for _, obj := range f.Objects {
			if isPublicAccessSwitch(f, obj.Get("publicNetworkAccess")) {
				return true
			}
		}
	}
	return false
}

func isPublicAccessSwitch(f *File, v *Value) bool {
	return v != nil && v.Kind == KindTernary && strings.TrimSpace(v.Cond) == "vnetEnabled" &&
		f.Literal(v.Items[0]) == "Disabled" && f.Literal(v.Items[1]) == "Enabled"
}

// checkDelegations: the app subnet's delegation must match the plan (Flex: Microsoft.App/
// environments, Elastic Premium: Microsoft.Web/serverFarms), or VNet integration fails.
func (p *Project) checkDelegations() []Finding {
	var out []Finding
	found := false
	for _, f := range p.Files {
		for _, obj := range f.Objects {
			v := obj.Get("serviceName")
			if v == nil {
				continue
			}
			found = true
			flex, ok := flexBranch(f, v)
			at := Finding{Rule: RuleNetwork, File: f.Path, Line: v.Line}
			switch {
			case !ok || v.Kind != KindTernary:
				out = append(out, with(at, "the app subnet delegation must depend on the plan (isFlex ? 'Microsoft.App/environments' : 'Microsoft.Web/serverFarms')"))
			case f.Literal(flex) != "Microsoft.App/environments" || f.Literal(otherBranch(v, flex)) != "Microsoft.Web/serverFarms":
				out = append(out, with(at, fmt.Sprintf("delegation %s: Flex Consumption needs Microsoft.App/environments, Elastic Premium Microsoft.Web/serverFarms", v.Text)))
			}
		}
	}
	if !found && len(p.resources(typeVNet)) > 0 {
		out = append(out, Finding{Rule: RuleNetwork, File: p.Files[0].Path, Line: 1, Message: "the virtual network delegates no subnet to the function app"})
	}
	return out
}

func otherBranch(v, chosen *Value) *Value {
	if v.Items[0] == chosen {
		return v.Items[1]
	}
	return v.Items[0]
}

// assignsRole reports whether some file holds the role definition id (a roles table entry).
func (p *Project) assignsRole(id string) bool {
	for _, f := range p.Files {
		for _, str := range f.Strings {
			if strings.EqualFold(str.Str, id) {
				return true
			}
		}
	}
	return false
}
