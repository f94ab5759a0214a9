package bicepcheck

import "testing"

// literalAcross follows a name through the files of a deployment; each case is one step it
// must take, or refuse to guess.
func TestLiteralAcrossFollowsModules(t *testing.T) {
	files := map[string]string{
		"main.bicep": `
module db 'modules/db.bicep' = {
  name: 'db'
}
module app 'modules/app.bicep' = {
  name: 'app'
  params: {
    fromOutput: db.outputs.keys
    literal: 'given'
    disputed: 'one'
  }
}
module app2 'modules/app.bicep' = {
  name: 'app2'
  params: {
    fromOutput: db.outputs.keys
    literal: 'given'
    disputed: 'two'
  }
}`,
		"modules/db.bicep": `
var keysName = 'idempotency-keys'
resource keys 'Microsoft.DocumentDB/databaseAccounts/sqlDatabases/containers@2024-11-15' = {
  name: keysName
}
output keys string = keys.name`,
		"modules/app.bicep": `
param fromOutput string
param literal string
param disputed string
param defaulted string = 'default'
param computed string = toLower('X')
var settings = {
  A: fromOutput
  B: literal
  C: disputed
  D: defaulted
  E: computed
}`,
	}
	p := &Project{}
	for path, src := range files {
		f, err := Parse(path, []byte(src))
		if err != nil || len(f.Syntax) > 0 {
			t.Fatalf("%s: %v %v", path, err, f.Syntax)
		}
		p.Files = append(p.Files, f)
	}
	app := p.file("modules/app.bicep")
	if app == nil || len(app.Vars) == 0 {
		t.Fatal("modules/app.bicep: missing, or without a variable")
	}
	settings := app.Vars[0].Value
	for key, want := range map[string]string{
		"A": "idempotency-keys", // param <- module output <- resource .name <- variable
		"B": "given",            // param <- the literal both callers pass
		"C": "",                 // the callers disagree: no single value
		"D": "default",          // no caller passes it: the parameter's default
		"E": "",                 // computed
	} {
		if got := p.literalAcross(app, settings.Get(key)); got != want {
			t.Errorf("%s resolves to %q, want %q", key, got, want)
		}
	}
}
