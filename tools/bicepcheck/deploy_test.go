package bicepcheck

import (
	"archive/zip"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The deployment scripts run against stand-ins for az, go, git, func, curl and sleep that log
// their arguments, so the order of the real calls (upload, restart, trigger sync, health
// checks), the retries and back-off, and the package contents are checked without Azure.
// FAKE_* variables script the answers: FAKE_DENY_UPLOADS uploads fail first (with
// FAKE_UPLOAD_ERROR, a 403 by default), FAKE_DENY_PUBLISH Core Tools publishes fail with
// Forbidden (FAKE_PUBLISH_ERROR replaces that text), FAKE_PRINCIPAL_NOT_FOUND deployments fail
// with PrincipalNotFound (FAKE_DEPLOY_ERROR replaces that text), FAKE_GROUP_EXISTS is what `az
// group exists` answers (true), FAKE_HEALTH lists the home page's status codes in turn (the last
// one repeats), FAKE_FUNCTIONS is how many functions the platform lists (by default, as many as
// the app has). sleep returns at once; jq is the real one.

const fakeTool = `#!/usr/bin/env bash
echo "$(basename "$0") $*" >>"$FAKE_LOG"
# What az prints for a deployment that failed on a principal Entra ID does not know yet.
principal_not_found='ERROR: {"status":"Failed","error":{"code":"DeploymentFailed","message":"At least one resource deployment operation failed.","details":[{"code":"PrincipalNotFound","message":"Principal 1234 does not exist in the directory 5678."}]}}'
# What az storage prints while the uploader's Blob Data Contributor role is propagating
# (printed with printf %b: \n is a line break).
upload_refused='ERROR: This request is not authorized to perform this operation using this permission.\nRequestId:7c1e2d3a-301e-0042-5b4a-1f2e3d4c5b6a\nTime:2026-11-30T10:00:00.0000000Z\nErrorCode:AuthorizationPermissionMismatch'
# take NAME: how many times NAME happened, this time included.
take() { local f="$FAKE_DIR/count-$1" n; n=$(( $(cat "$f" 2>/dev/null || echo 0) + 1 )); echo "$n" >"$f"; echo "$n"; }
case "$(basename "$0") $*" in
"sleep"*) ;;
"curl"*)
  read -r -a codes <<<"${FAKE_HEALTH:-200}"
  n=$(take curl); i=$(( n <= ${#codes[@]} ? n - 1 : ${#codes[@]} - 1 ))
  printf '%s' "${codes[$i]}" ;;
"func azure functionapp publish"*)
  if [ "$(take func)" -le "${FAKE_DENY_PUBLISH:-0}" ]; then printf '%b\n' "${FAKE_PUBLISH_ERROR:-Error uploading archive (Forbidden).}" >&2; exit 1; fi ;;
"az functionapp list"*) echo rg-test ;;
"az functionapp show"*defaultHostName*) echo func-x.azurewebsites.net ;;
"az functionapp show"*orders-http-auth*) echo "${FAKE_HTTP_AUTH:-FunctionKeys}" ;;
"az functionapp show"*) printf '%s\n' /subscriptions/s/resourceGroups/rg-test/providers/Microsoft.Web/sites/func-x "$FAKE_PLAN" stpackages app-package ;;
"az functionapp function list"*) for i in $(seq "${FAKE_FUNCTIONS:-$(cd "$FAKE_DIR" && ls -d ./*/function.json | wc -l)}"); do echo "func-x/F$i"; done ;;
"az deployment group create"*)
  if [ "$(take deploy)" -le "${FAKE_PRINCIPAL_NOT_FOUND:-0}" ]; then
    printf '%b\n' "${FAKE_DEPLOY_ERROR:-$principal_not_found}" >&2; exit 1
  fi ;;
"az group exists"*) echo "${FAKE_GROUP_EXISTS:-true}" ;;
"az deployment group show"*) echo func-x ;;
"az cloud show"*) echo https://management.azure.com/ ;;
"az storage blob list"*) printf 'releases/20260101T000000Z-abc1234.zip\n' ;;
"az storage blob upload"*)
  if [ "$(take upload)" -le "${FAKE_DENY_UPLOADS:-0}" ]; then
    printf '%b\n' "${FAKE_UPLOAD_ERROR:-$upload_refused}" >&2; exit 1
  fi
  while [ $# -gt 0 ]; do [ "$1" = --file ] && cp "$2" "$FAKE_DIR/uploaded-$(basename "$2")"; shift; done ;;
"az storage blob download"*)
  while [ $# -gt 0 ]; do [ "$1" = --file ] && cp "$FAKE_DIR/release.zip" "$2"; shift; done ;;
"go build"*) mkdir -p bin && printf '#!/bin/sh\n' >bin/handler && chmod +x bin/handler ;;
"git rev-parse"*) echo abc1234 ;;
esac
exit 0
`

type deployRun struct {
	t   *testing.T
	dir string // a copy of the app root with bicep/deploy
	log string
}

// newDeployRun marks the test parallel: each run has its own copy and its own fakes.
func newDeployRun(t *testing.T) *deployRun {
	t.Helper()
	t.Parallel()
	for _, tool := range []string{"zip", "jq"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed", tool)
		}
	}
	dir := t.TempDir()
	copyFile(t, filepath.Join(repoRoot, "host.json"), filepath.Join(dir, "host.json"))
	fns, _ := filepath.Glob(filepath.Join(repoRoot, "*", "function.json"))
	for _, fn := range fns {
		copyFile(t, fn, filepath.Join(dir, filepath.Base(filepath.Dir(fn)), "function.json"))
	}
	for _, s := range []string{"lib.sh", "publish.sh", "rollback.sh", "deploy.sh", "azd-provision.sh"} {
		copyFile(t, filepath.Join(repoRoot, "bicep", "deploy", s), filepath.Join(dir, "bicep", "deploy", s))
	}
	copyFile(t, filepath.Join(repoRoot, "bicep", "main.parameters.json"), filepath.Join(dir, "bicep", "main.parameters.json"))
	copyFile(t, filepath.Join(repoRoot, "azure.yaml"), filepath.Join(dir, "azure.yaml"))
	fake := filepath.Join(dir, "fake")
	for _, tool := range []string{"az", "go", "git", "func", "curl", "sleep"} {
		if err := os.MkdirAll(fake, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(fake, tool), []byte(fakeTool), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return &deployRun{t: t, dir: dir, log: filepath.Join(dir, "calls.log")}
}

func (r *deployRun) run(plan, script string, args ...string) (string, error) {
	return r.runEnv(nil, plan, script, args...)
}

// runEnv runs a script with extra environment variables (FAKE_* answers, budgets).
func (r *deployRun) runEnv(env []string, plan, script string, args ...string) (string, error) {
	cmd := exec.Command("bash", append([]string{filepath.Join(r.dir, "bicep", "deploy", script)}, args...)...)
	cmd.Dir = r.dir
	cmd.Env = append(append(os.Environ(),
		"PATH="+filepath.Join(r.dir, "fake")+string(os.PathListSeparator)+os.Getenv("PATH"),
		"FAKE_LOG="+r.log, "FAKE_DIR="+r.dir, "FAKE_PLAN="+plan), env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// calls returns the logged commands that start with one of the prefixes, in order.
func (r *deployRun) calls(prefixes ...string) []string {
	data, _ := os.ReadFile(r.log)
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		for _, p := range prefixes {
			if strings.HasPrefix(l, p) {
				out = append(out, l)
			}
		}
	}
	return out
}

func TestPublishElasticPremiumUploadsRestartsAndSyncs(t *testing.T) {
	r := newDeployRun(t)
	out, err := r.run("ElasticPremium", "publish.sh", "func-x")
	if err != nil {
		t.Fatalf("publish.sh: %v\n%s", err, out)
	}
	steps := r.calls("go build", "az storage blob upload", "az functionapp restart", "az rest", "func")
	want := []string{"go build", "--name releases/", "--name current.zip", "az functionapp restart", "syncfunctiontriggers"}
	if len(steps) != len(want) {
		t.Fatalf("calls:\n%s\nwant steps %v", strings.Join(steps, "\n"), want)
	}
	for i, w := range want {
		if !strings.Contains(steps[i], w) {
			t.Errorf("step %d = %q, want it to contain %q", i, steps[i], w)
		}
	}
	if !strings.Contains(steps[0], "-o bin/handler ./cmd/handler") {
		t.Errorf("go build call %q does not build ./cmd/handler into bin/handler", steps[0])
	}
	if !strings.Contains(steps[2], "--auth-mode login") {
		t.Errorf("upload %q does not use Entra auth", steps[2])
	}
	uploaded, _ := filepath.Glob(filepath.Join(r.dir, "uploaded-*.zip"))
	if len(uploaded) == 0 {
		t.Fatal("no package was uploaded")
	}
	names := zipNames(t, uploaded[0])
	for _, want := range []string{"host.json", "bin/handler", "ProcessOrder/function.json"} {
		if !names[want] {
			t.Errorf("package lacks %s; has %v", want, names)
		}
	}
	for name := range names {
		if name != "host.json" && name != "bin/handler" && !strings.HasSuffix(name, "/function.json") {
			t.Errorf("package holds %s, which is not part of the app", name)
		}
	}
}

func TestPublishFlexUsesCoreTools(t *testing.T) {
	r := newDeployRun(t)
	if out, err := r.run("FlexConsumption", "publish.sh", "func-x", "rg-test"); err != nil {
		t.Fatalf("publish.sh: %v\n%s", err, out)
	}
	if got := r.calls("func "); len(got) != 1 || got[0] != "func azure functionapp publish func-x --custom" {
		t.Errorf("func calls = %q", got)
	}
	if got := r.calls("az storage"); len(got) != 0 {
		t.Errorf("Flex publish touched the package container: %q", got)
	}
}

func TestRollbackActivatesTheNamedRelease(t *testing.T) {
	r := newDeployRun(t)
	writeZip(t, filepath.Join(r.dir, "release.zip"))
	if out, err := r.run("ElasticPremium", "rollback.sh", "func-x", "20260101T000000Z-abc1234"); err != nil {
		t.Fatalf("rollback.sh: %v\n%s", err, out)
	}
	steps := r.calls("az storage blob download", "az storage blob upload", "az functionapp restart", "az rest")
	if len(steps) != 4 || !strings.Contains(steps[0], "releases/20260101T000000Z-abc1234.zip") ||
		!strings.Contains(steps[1], "--name current.zip") || !strings.Contains(steps[3], "syncfunctiontriggers") {
		t.Errorf("rollback calls:\n%s", strings.Join(steps, "\n"))
	}
}

func TestRollbackRefusesFlex(t *testing.T) {
	r := newDeployRun(t)
	out, err := r.run("FlexConsumption", "rollback.sh", "func-x", "any")
	if err == nil || !strings.Contains(out, "publish.sh") {
		t.Fatalf("rollback.sh on Flex: err %v, output %s", err, out)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, data, 0o755); err != nil {
		t.Fatal(err)
	}
}

func zipNames(t *testing.T, path string) map[string]bool {
	t.Helper()
	zr, err := zip.OpenReader(path)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	names := map[string]bool{}
	for _, f := range zr.File {
		names[f.Name] = true
	}
	return names
}

func writeZip(t *testing.T, path string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(f)
	if _, err := zw.Create("host.json"); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// deployPath is a path into bicep/deploy as docs, the Makefile, azd's hooks and scripts write it.
var deployPath = regexp.MustCompile(`bicep/deploy/[A-Za-z0-9_.-]+`)

// Every bicep/deploy/<file> the repository names exists: a retired script (servicebus.sh, whose
// job ordersctl does) leaves no instruction behind that an operator would follow into an error.
func TestEveryDeployScriptNamedExists(t *testing.T) {
	named := map[string][]string{}
	err := filepath.WalkDir(repoRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); name == ".git" || name == "node_modules" || name == "testdata" || strings.HasPrefix(name, ".") && path != repoRoot {
				return filepath.SkipDir
			}
			return nil
		}
		switch filepath.Ext(path) {
		case ".md", ".sh", ".yaml", ".yml", ".go", ".bicep", ".json":
		default:
			if d.Name() != "Makefile" {
				return nil
			}
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, ref := range deployPath.FindAllString(string(data), -1) {
			named[ref] = append(named[ref], path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(named) < 4 {
		t.Fatalf("found %d bicep/deploy paths named; the walk lost track: %v", len(named), named)
	}
	for ref, where := range named {
		if _, err := os.Stat(filepath.Join(repoRoot, filepath.FromSlash(ref))); err != nil {
			t.Errorf("%s is named in %v but does not exist", ref, where)
		}
	}
}
