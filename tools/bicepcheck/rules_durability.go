package bicepcheck

import "strings"

// RuleCosmosDurability: order data survives the account's own failures. The Cosmos DB account
// keeps continuous backup (point-in-time restore) and exactly one write region: create-as-claim
// is a uniqueness check within one write region, and with several two regions could each accept
// the same orderId, the conflict resolution dropping one accepted order silently
// (docs/adr/0014-single-write-region.md).
const RuleCosmosDurability = "cosmos-durability"

var continuousTiers = map[string]bool{"Continuous7Days": true, "Continuous30Days": true}

func checkCosmosDurability(p *Project) []Finding {
	var out []Finding
	for _, a := range p.resources(typeCosmosAccount) {
		props := a.Body.Get("properties")
		if !props.Get("enableMultipleWriteLocations").IsBool(false) {
			out = append(out, a.finding(RuleCosmosDurability, "Cosmos DB account %s: enableMultipleWriteLocations must be false, written out: with several write regions two of them can each create the same orderId and conflict resolution drops one accepted order (ADR 0014)", a.Symbol))
		}
		backup := props.Get("backupPolicy")
		typ := a.File.Literal(backup.Get("type"))
		tier := a.File.Literal(backup.Get("continuousModeProperties", "tier"))
		if !strings.EqualFold(typ, "Continuous") || !continuousTiers[tier] {
			out = append(out, a.finding(RuleCosmosDurability, "Cosmos DB account %s: backupPolicy must be Continuous with tier Continuous7Days or Continuous30Days (got type %q, tier %q): without it a deleted container or overwritten orders cannot be restored to a point in time", a.Symbol, typ, tier))
		}
	}
	return out
}

// Notes are what someone editing the template must know and no rule can check before Azure
// answers; bicepcheck prints them without failing.
func (p *Project) Notes() []Finding {
	var out []Finding
	for _, a := range p.resources(typeCosmosAccount) {
		tier := a.File.Literal(a.Body.Get("properties", "backupPolicy", "continuousModeProperties", "tier"))
		if tier == "" {
			continue
		}
		out = append(out, a.finding(RuleCosmosDurability, "note: Cosmos DB account %s keeps backup tier %s. Azure refuses a PUT that changes the tier together with any other account property (\"Cannot update continuous backup mode and other properties at the same time\", Azure/bicep#15109): change the tier in a deployment that changes nothing else on the account, then the rest", a.Symbol, tier))
	}
	return out
}
