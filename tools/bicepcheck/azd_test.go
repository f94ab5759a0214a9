package bicepcheck

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// `azd up` runs azure.yaml's hooks around azd's own provisioning. These tests run the hooks as
// azure.yaml writes them (sh -c "<run>", in the project root, with the azd environment exported
// as azd exports it) against the same fakes as deploy.sh: the preprovision hook must deploy with
// deploy.sh's retries and publish nothing; the postprovision hook publishes and waits.

type azdHook struct {
	Shell string `yaml:"shell"`
	Run   string `yaml:"run"`
}

func azdHooks(t *testing.T) map[string]azdHook {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, "azure.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Hooks map[string]azdHook `yaml:"hooks"`
	}
	if err := yaml.Unmarshal(data, &file); err != nil {
		t.Fatalf("azure.yaml: %v", err)
	}
	for _, name := range []string{"preprovision", "postprovision"} {
		if h, ok := file.Hooks[name]; !ok || h.Shell != "sh" || h.Run == "" {
			t.Fatalf("azure.yaml has no sh %s hook: %+v", name, file.Hooks)
		}
	}
	return file.Hooks
}

// runHook runs one hook of azure.yaml in the run's copy with the azd environment env.
func (r *deployRun) runHook(hook azdHook, env ...string) (string, error) {
	cmd := exec.Command("sh", "-c", hook.Run)
	cmd.Dir = r.dir
	cmd.Env = append(append(os.Environ(),
		"PATH="+filepath.Join(r.dir, "fake")+string(os.PathListSeparator)+os.Getenv("PATH"),
		"FAKE_LOG="+r.log, "FAKE_DIR="+r.dir, "FAKE_PLAN=ElasticPremium"), env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// azdEnv is an azd environment as `azd env new dev` and the docs' `azd env set` leave it.
var azdEnv = []string{
	"AZURE_ENV_NAME=dev", "AZURE_LOCATION=westeurope", "AZURE_RESOURCE_GROUP=rg-test",
	"AZURE_PRINCIPAL_ID=0c7b2f6a-5d1e-4c9a-9d4e-3f2a1b0c9d8e", "AZURE_SUBSCRIPTION_ID=s",
}

func TestAzdUpRetriesAFirstDeploymentThenPublishes(t *testing.T) {
	hooks := azdHooks(t)
	r := newDeployRun(t)
	out, err := r.runHook(hooks["preprovision"], append(azdEnv, "FAKE_PRINCIPAL_NOT_FOUND=1")...)
	if err != nil {
		t.Fatalf("preprovision: %v\n%s", err, out)
	}
	deployments := r.calls("az deployment group create")
	if len(deployments) != 2 || !strings.Contains(out, "(principal not found): deploying once more in 60s") {
		t.Fatalf("deployments %q, output:\n%s", deployments, out)
	}
	// The parameters are main.parameters.json's, filled from the azd environment as azd fills
	// them: set values, defaults for unset ones, nothing for empty ones.
	args := strings.Fields(deployments[1])
	for _, want := range []string{"-g", "rg-test", "environmentName=dev", "location=westeurope", "hostingPlan=ElasticPremium",
		"deployerPrincipalId=0c7b2f6a-5d1e-4c9a-9d4e-3f2a1b0c9d8e", "deployerPrincipalType=User", "vnetEnabled=false"} {
		if !slices.Contains(args, want) {
			t.Errorf("deployment %q lacks %s", deployments[1], want)
		}
	}
	for _, a := range args {
		if strings.HasPrefix(a, "alertEmail=") || strings.Contains(a, "${") {
			t.Errorf("deployment passes %s: an unset value must be left to the template", a)
		}
	}
	if len(r.calls("go build", "az storage")) != 0 {
		t.Errorf("preprovision published; that is postprovision's job:\n%s", out)
	}

	out, err = r.runHook(hooks["postprovision"], append(azdEnv, "AZURE_FUNCTION_APP_NAME=func-x")...)
	if err != nil {
		t.Fatalf("postprovision: %v\n%s", err, out)
	}
	if len(r.calls("go build")) != 1 || !strings.Contains(out, "func-x is running") {
		t.Errorf("postprovision did not publish and wait for health:\n%s", out)
	}
}

func TestAzdPreprovisionCreatesTheResourceGroup(t *testing.T) {
	r := newDeployRun(t)
	out, err := r.runHook(azdHooks(t)["preprovision"], append(azdEnv, "FAKE_GROUP_EXISTS=false", "HOSTING_PLAN=FlexConsumption")...)
	if err != nil {
		t.Fatalf("preprovision: %v\n%s", err, out)
	}
	if got := r.calls("az group create"); len(got) != 1 || !strings.Contains(got[0], "-n rg-test -l westeurope") {
		t.Errorf("group create calls %q", got)
	}
	if got := r.calls("az deployment group create"); len(got) != 1 || !strings.Contains(got[0], "hostingPlan=FlexConsumption") {
		t.Errorf("deployments %q", got)
	}
}

func TestAzdPreprovisionNeedsAResourceGroup(t *testing.T) {
	r := newDeployRun(t)
	env := slices.DeleteFunc(slices.Clone(azdEnv), func(s string) bool { return strings.HasPrefix(s, "AZURE_RESOURCE_GROUP=") })
	out, err := r.runHook(azdHooks(t)["preprovision"], append(env, "AZURE_RESOURCE_GROUP=")...)
	if err == nil || !strings.Contains(out, "azd env set AZURE_RESOURCE_GROUP") {
		t.Fatalf("err %v, output:\n%s", err, out)
	}
	if len(r.calls("az deployment")) != 0 {
		t.Error("deployed without a resource group")
	}
}

// A failure deploy.sh does not retry stops azd up before azd's own provisioning.
func TestAzdPreprovisionStopsOnOtherErrors(t *testing.T) {
	r := newDeployRun(t)
	out, err := r.runHook(azdHooks(t)["preprovision"], append(azdEnv, "FAKE_PRINCIPAL_NOT_FOUND=1",
		`FAKE_DEPLOY_ERROR=ERROR: {"code":"InvalidTemplateDeployment","message":"Tracking id 412f-0403."}`)...)
	if err == nil || !strings.Contains(out, "so not retried") {
		t.Fatalf("err %v, output:\n%s", err, out)
	}
	if got := len(r.calls("az deployment group create")); got != 1 {
		t.Errorf("%d deployments, want 1", got)
	}
}
