package bicepcheck

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ordersink/orders-consumer/tools/bicepcheck/appconfig"
)

var (
	repoRoot = filepath.Join("..", "..")
	bicepDir = filepath.Join(repoRoot, "bicep")
)

func TestRepositoryBicepPassesEveryRule(t *testing.T) {
	p, err := Load(bicepDir, repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range p.Check() {
		t.Error(f)
	}
}

// The rules pass vacuously if the reader stops seeing what they check; this pins what it sees.
func TestReaderSeesTheDeployment(t *testing.T) {
	p, err := Load(bicepDir, repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []struct{ typ, name string }{
		{typeQueue, "orders"},
		{typeQueue, "orders-deadletter"},
		{typeTopic, "order-events"},
		{typeContainer, "orders"},
		{typeContainer, "leases"},
		{typeContainer, "idempotency-keys"},
		{typeCosmosDatabase, "shop"},
	} {
		if _, ok := p.named(want.typ, want.name); !ok {
			t.Errorf("no %s named %q found", want.typ, want.name)
		}
	}
	s, ok := p.appSettings()
	if !ok || len(s.values) < 15 {
		t.Fatalf("found %d app settings, want at least 15", len(s.values))
	}
	// The container settings are parameters filled from module outputs two files away.
	for setting, container := range map[string]string{"COSMOS_CONTAINER": "orders", "IDEMPOTENCY_CONTAINER": "idempotency-keys"} {
		if got := p.literalAcross(s.file, s.values[setting]); got != container {
			t.Errorf("%s resolves to %q across the modules, want %q", setting, got, container)
		}
	}
	// The first-deployment rules see the loop, its decorator and the Cosmos DB endpoint.
	roles := p.resources(typeSQLRole)
	if len(roles) != 1 || !roles[0].Loop || !slices.Contains(roles[0].Decorators, "@batchSize(1)") {
		t.Errorf("Cosmos DB role assignments read as %+v, want one loop with @batchSize(1)", roles)
	}
	cosmosEndpoints := 0
	for _, pe := range p.resources(typePrivateEndpoint) {
		if fileDeclaresCosmosEndpoint(pe.File) {
			cosmosEndpoints++
		}
	}
	if cosmosEndpoints == 0 {
		t.Error("no private endpoint is recognised as the Cosmos DB one")
	}
	guids, assignments, outputs := 0, 0, 0
	for _, f := range p.Files {
		for _, str := range f.Strings {
			if guidPattern.MatchString(str.Str) {
				guids++
			}
		}
		assignments += len(f.ResourcesOfType(typeRoleAssignment)) + len(f.ResourcesOfType(typeSQLRole))
		outputs += len(f.Outputs)
	}
	if guids < 8 || assignments < 4 || outputs < 10 {
		t.Errorf("found %d role ids, %d role assignments, %d outputs; the reader lost track", guids, assignments, outputs)
	}
}

// httpAPI holds SubmitOrder and GetOrder as docs/contract.md gives them. They are created on
// another branch; every project below sees them, so the rules are proven on them before they land.
var httpAPI = filepath.Join("testdata", "http-api")

func loadApp(t *testing.T, overlays ...string) *appconfig.App {
	t.Helper()
	app, err := appconfig.Load(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range append([]string{httpAPI}, overlays...) {
		if err := app.Overlay(dir); err != nil {
			t.Fatal(err)
		}
	}
	return app
}

func TestRepositoryWithHTTPAPIPassesEveryRule(t *testing.T) {
	p, err := Load(bicepDir, repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	p.App = loadApp(t)
	for _, f := range p.Check() {
		t.Error(f)
	}
}

// Every fixture under testdata/<rule>/ breaks one rule and names the message it must produce.
// A file <name>.bicep is a one-file project; its first line is `// want: <message fragment>`.
// A folder <name>/ holds want.txt (the fragment), and either .bicep files (the project, modules
// in subfolders) or none (the repository's bicep/), any <Function>/function.json folders,
// laid over the repository's functions, and a handler/ folder read in place of the repository's.
func TestEachBrokenFixtureFailsItsRule(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "*", "*.bicep"))
	if err != nil {
		t.Fatal(err)
	}
	dirs, err := filepath.Glob(filepath.Join("testdata", "*", "*", "want.txt"))
	if err != nil {
		t.Fatal(err)
	}
	covered := map[string]bool{}
	for _, path := range append(files, dirs...) {
		fixture := strings.TrimSuffix(path, string(filepath.Separator)+"want.txt")
		rule := filepath.Base(filepath.Dir(fixture))
		covered[rule] = true
		t.Run(rule+"/"+filepath.Base(fixture), func(t *testing.T) {
			p, want := loadFixture(t, fixture)
			if rule != RuleSyntax {
				for _, f := range p.Files {
					if len(f.Syntax) > 0 {
						t.Fatalf("fixture does not parse, so it proves nothing about %s: %v", rule, f.Syntax)
					}
				}
			}
			findings := p.Check()
			for _, got := range findings {
				if got.Rule == rule && strings.Contains(got.Message, want) {
					return
				}
			}
			t.Errorf("no [%s] finding containing %q; got:\n%s", rule, want, join(findings))
		})
	}
	for _, r := range Rules {
		if !covered[r.ID] {
			t.Errorf("rule %s has no broken fixture under testdata/%s/", r.ID, r.ID)
		}
	}
}

// loadFixture reads a fixture (a .bicep file or a folder, see above) and the message it wants.
func loadFixture(t *testing.T, fixture string) (*Project, string) {
	t.Helper()
	if strings.HasSuffix(fixture, ".bicep") {
		src, err := os.ReadFile(fixture)
		if err != nil {
			t.Fatal(err)
		}
		first, _, _ := strings.Cut(string(src), "\n")
		want, ok := strings.CutPrefix(first, "// want: ")
		if !ok {
			t.Fatalf("the first line must be `// want: <message fragment>`, got %q", first)
		}
		f, err := Parse(fixture, src)
		if err != nil {
			t.Fatal(err)
		}
		return &Project{Files: []*File{f}, App: loadApp(t)}, want
	}
	want, err := os.ReadFile(filepath.Join(fixture, "want.txt"))
	if err != nil {
		t.Fatal(err)
	}
	bicep := bicepDir
	if own, _ := filepath.Glob(filepath.Join(fixture, "*.bicep")); len(own) > 0 {
		bicep = fixture
	}
	p, err := Load(bicep, repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	p.App = loadApp(t, fixture)
	if handler := filepath.Join(fixture, "handler"); isDir(handler) {
		p.HandlerDir = handler
	}
	return p, strings.TrimSpace(string(want))
}

func join(findings []Finding) string {
	var b strings.Builder
	for _, f := range findings {
		b.WriteString("  " + f.String() + "\n")
	}
	return b.String()
}

// main.parameters.json (azd's parameter file) may only name parameters main.bicep declares,
// and must give every parameter that has no default.
func TestParametersFileMatchesMainBicep(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(bicepDir, "main.bicep"))
	if err != nil {
		t.Fatal(err)
	}
	main, err := Parse("main.bicep", src)
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Parameters map[string]json.RawMessage `json:"parameters"`
	}
	data, err := os.ReadFile(filepath.Join(bicepDir, "main.parameters.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &file); err != nil {
		t.Fatalf("main.parameters.json: %v", err)
	}
	declared := map[string]bool{}
	for _, p := range main.Params {
		declared[p.Name] = true
		if _, given := file.Parameters[p.Name]; p.Default == nil && !given {
			t.Errorf("main.bicep parameter %s has no default and main.parameters.json does not set it", p.Name)
		}
	}
	for name := range file.Parameters {
		if !declared[name] {
			t.Errorf("main.parameters.json sets %s, which main.bicep does not declare", name)
		}
	}
	for _, problem := range azdMappingProblems(data) {
		t.Error(problem)
	}
}

// azdEnvironment are the parameters azd must fill from its environment: a CI pipeline signed in
// as a service principal sets AZURE_PRINCIPAL_TYPE=ServicePrincipal, or its role assignments
// would be created with principalType User and fail.
var azdEnvironment = map[string]string{
	"deployerPrincipalId":   "AZURE_PRINCIPAL_ID",
	"deployerPrincipalType": "AZURE_PRINCIPAL_TYPE",
	"vnetEnabled":           "VNET_ENABLED",
}

func azdMappingProblems(data []byte) []string {
	var file struct {
		Parameters map[string]struct {
			Value any `json:"value"`
		} `json:"parameters"`
	}
	if err := json.Unmarshal(data, &file); err != nil {
		return []string{err.Error()}
	}
	var out []string
	for _, param := range sortedKeys(azdEnvironment) {
		v, _ := file.Parameters[param].Value.(string)
		if !strings.HasPrefix(v, "${"+azdEnvironment[param]+"}") && !strings.HasPrefix(v, "${"+azdEnvironment[param]+"=") {
			out = append(out, fmt.Sprintf("main.parameters.json: %s must come from the azd environment value %s, got %q", param, azdEnvironment[param], v))
		}
	}
	return out
}

func TestAzdMappingCatchesAFixedPrincipalType(t *testing.T) {
	broken := `{"parameters": {"deployerPrincipalId": {"value": "${AZURE_PRINCIPAL_ID}"},
		"deployerPrincipalType": {"value": "User"}, "vnetEnabled": {"value": "${VNET_ENABLED=false}"}}}`
	got := azdMappingProblems([]byte(broken))
	if len(got) != 1 || !strings.Contains(got[0], "deployerPrincipalType must come from the azd environment value AZURE_PRINCIPAL_TYPE") {
		t.Fatalf("problems = %q", got)
	}
}

func isDir(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.IsDir()
}
