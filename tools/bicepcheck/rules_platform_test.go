package bicepcheck

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The platform rules pass vacuously if they stop seeing what they check: this pins what they see
// in the repository's bicep/.
func TestPlatformRulesSeeTheDeployment(t *testing.T) {
	p, err := Load(bicepDir, repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	main := p.file(filepath.Join(bicepDir, "main.bicep"))
	if main == nil || p.isModule(main) {
		t.Fatal("main.bicep is not read as the entry file")
	}
	for _, b := range platformBounds {
		if !slices.ContainsFunc(main.Params, func(prm Param) bool { return prm.Name == b.param }) {
			t.Errorf("main.bicep declares no param %s: rule %s would check nothing", b.param, RuleParamBounds)
		}
	}
	if !p.integrationSubnetHasNAT() {
		t.Error("the app subnet's NAT gateway is not seen")
	}
	want := map[string]bool{typeNamespace: true, typeStorage: false, typeCosmosAccount: false}
	for typ, open := range want {
		for _, r := range p.resources(typ) {
			if got := p.publicInVNetMode(r); got != open {
				t.Errorf("%s %s: public in VNet mode = %t, want %t", typ, r.Symbol, got, open)
			}
		}
	}
	for _, typ := range []string{"serviceBusTrigger", "cosmosDBTrigger"} {
		if !p.hasTrigger(typ) {
			t.Errorf("no %s seen in the function folders", typ)
		}
	}
}

// A serverless account with one location, however written, passes; so does a Premium namespace
// behind a private endpoint without a NAT gateway.
func TestPlatformRulesAcceptWhatAzureAccepts(t *testing.T) {
	for name, src := range map[string]string{
		"serverless branch with one location": `
param serverless bool = true
resource account 'Microsoft.DocumentDB/databaseAccounts@2024-11-15' = {
  name: 'cosmos'
  properties: {
    locations: serverless ? [
      {
        locationName: 'westeurope'
      }
    ] : [
      {
        locationName: 'westeurope'
      }
      {
        locationName: 'northeurope'
      }
    ]
    capabilities: serverless ? [
      {
        name: 'EnableServerless'
      }
    ] : []
  }
}`,
		"premium namespace behind an endpoint": `
resource namespace 'Microsoft.ServiceBus/namespaces@2024-01-01' = {
  name: 'sb'
  sku: {
    name: 'Premium'
  }
}
resource endpoint 'Microsoft.Network/privateEndpoints@2023-11-01' = {
  name: 'pe'
  properties: {
    privateLinkServiceConnections: [
      {
        name: 'sb'
        properties: {
          groupIds: [
            'namespace'
          ]
        }
      }
    ]
  }
}
resource site 'Microsoft.Web/sites@2024-04-01' = {
  name: 'func'
  properties: {
    virtualNetworkSubnetId: 'subnet'
  }
}`,
		"bounds within Azure's": `
@minValue(40)
@maxValue(200)
param flexMaximumInstanceCount int = 100
@allowed([
  2048
])
param flexInstanceMemoryMB int = 2048
@minValue(2000)
param cosmosAutoscaleMaxThroughput int = 4000`,
	} {
		t.Run(name, func(t *testing.T) {
			f, err := Parse(name+".bicep", []byte(src))
			if err != nil || len(f.Syntax) > 0 {
				t.Fatalf("parse: %v %v", err, f.Syntax)
			}
			p := &Project{Files: []*File{f}, App: loadApp(t)}
			for _, check := range []func(*Project) []Finding{checkCosmosRegions, checkParamBounds} {
				if got := check(p); len(got) > 0 {
					t.Errorf("findings on a valid template:\n%s", join(got))
				}
			}
			for _, got := range checkVNetPaths(p) {
				if strings.Contains(got.Message, "Service Bus") {
					t.Errorf("finding on a Premium namespace behind an endpoint: %s", got)
				}
			}
		})
	}
}

// bicepcheck prints the continuous-backup tier's edit rule wherever the tier is set, without
// failing.
func TestNotesCarryTheBackupTierEditRule(t *testing.T) {
	p, err := Load(bicepDir, repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	notes := p.Notes()
	if len(notes) != 1 || !strings.Contains(notes[0].Message, "Azure/bicep#15109") || !strings.Contains(notes[0].Message, "Continuous30Days") {
		t.Fatalf("notes = %v", notes)
	}
}
