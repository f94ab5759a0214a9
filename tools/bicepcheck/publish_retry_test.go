package bicepcheck

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// The first publish after `azd up` races the role assignments the same deployment made:
// publish.sh must wait them out (bounded), say so, and report success only once the app runs.

func TestPublishRetriesUploadWhileRolePropagates(t *testing.T) {
	r := newDeployRun(t)
	out, err := r.runEnv([]string{"FAKE_DENY_UPLOADS=3"}, "ElasticPremium", "publish.sh", "func-x")
	if err != nil {
		t.Fatalf("publish.sh: %v\n%s", err, out)
	}
	if got := len(r.calls("az storage blob upload")); got != 5 {
		t.Errorf("%d uploads, want 3 refused + releases/ + current.zip", got)
	}
	if got := strings.Join(r.calls("sleep"), ","); got != "sleep 10,sleep 20,sleep 40" {
		t.Errorf("back-off = %s, want sleep 10,20,40", got)
	}
	if !strings.Contains(out, "new role assignments take minutes to propagate, retrying in 10s") {
		t.Errorf("the retry is not explained on screen:\n%s", out)
	}
	if !strings.Contains(out, "func-x is running") {
		t.Errorf("no health confirmation:\n%s", out)
	}
}

func TestPublishGivesUpWhenTheRoleNeverArrives(t *testing.T) {
	r := newDeployRun(t)
	out, err := r.runEnv([]string{"FAKE_DENY_UPLOADS=1000", "ROLE_WAIT_SECONDS=120"}, "ElasticPremium", "publish.sh", "func-x")
	if err == nil {
		t.Fatalf("publish.sh succeeded without the role:\n%s", out)
	}
	// 10+20+40+60 = 130 >= 120: four waits, five attempts, then it stops.
	if got := len(r.calls("az storage blob upload")); got != 5 {
		t.Errorf("%d upload attempts, want 5 within a 120 s budget", got)
	}
	if !strings.Contains(out, "still refused (401/403) after 130s") {
		t.Errorf("no clear final error:\n%s", out)
	}
	if len(r.calls("az functionapp restart")) != 0 {
		t.Error("restarted the app although nothing was uploaded")
	}
}

// Only an error's code says 401/403: digits inside a request or activity id (…-403b-…, …401…)
// are not a status, and an error they appear in is not retried.
func TestPublishDoesNotRetryOtherFailures(t *testing.T) {
	for name, c := range map[string]struct{ plan, env string }{
		"storage 404, request id with 403": {"ElasticPremium",
			`FAKE_UPLOAD_ERROR=ERROR: The specified container does not exist.\nRequestId:5a1c0e2f-403b-0011-2a3b-401c4d5e6f70\nTime:2026-11-30T10:00:00.4030000Z\nErrorCode:ContainerNotFound`},
		"storage 404, code in the message text": {"ElasticPremium",
			`FAKE_UPLOAD_ERROR=ERROR: The container does not exist; an earlier AuthorizationPermissionMismatch (403) was logged.\nErrorCode:ContainerNotFound`},
		"core tools, activity id with 403": {"FlexConsumption",
			`FAKE_PUBLISH_ERROR=Deployment failed. Activity id: 0e8f1d2c-403a-4e1b-9c2d-4010aa0b1c2d. Status: BadRequest`},
	} {
		t.Run(name, func(t *testing.T) {
			r := newDeployRun(t)
			out, err := r.runEnv([]string{"FAKE_DENY_UPLOADS=1", "FAKE_DENY_PUBLISH=1", c.env}, c.plan, "publish.sh", "func-x", "rg-test")
			if err == nil || !strings.Contains(out, "not an authorization error") {
				t.Fatalf("err %v, output:\n%s", err, out)
			}
			if got := len(r.calls("az storage blob upload", "func azure")); got != 1 {
				t.Errorf("%d attempts, want 1: nothing in the error says 401/403", got)
			}
			if len(r.calls("sleep")) != 0 {
				t.Error("waited before giving up on an error that is not an authorization error")
			}
		})
	}
}

// The codes of role propagation, each in the form its tool prints it.
func TestPublishRetriesEveryAuthorizationCode(t *testing.T) {
	for name, env := range map[string]string{
		"storage ErrorCode":  `FAKE_UPLOAD_ERROR=ERROR: Server failed to authenticate the request.\nRequestId:1\nErrorCode:AuthorizationFailure`,
		"azure-core Code":    `FAKE_UPLOAD_ERROR=ERROR: (AuthorizationFailed) The client does not have authorization.\nCode: AuthorizationFailed\nMessage: The client does not have authorization.`,
		"ARM JSON, nested":   `FAKE_UPLOAD_ERROR=ERROR: {"error":{"code":"LinkedAuthorizationFailed","message":"x","details":[{"code":"AuthorizationFailed","message":"y"}]}}`,
		"storage 403 status": `FAKE_UPLOAD_ERROR=ERROR: This request is not authorized to perform this operation using this permission.\nErrorCode:AuthorizationPermissionMismatch`,
	} {
		t.Run(name, func(t *testing.T) {
			r := newDeployRun(t)
			out, err := r.runEnv([]string{"FAKE_DENY_UPLOADS=1", env}, "ElasticPremium", "publish.sh", "func-x")
			if err != nil {
				t.Fatalf("publish.sh: %v\n%s", err, out)
			}
			if got := strings.Join(r.calls("sleep"), ","); !strings.HasPrefix(got, "sleep 10") {
				t.Errorf("sleeps %q: the refusal was not retried", got)
			}
		})
	}
}

func TestFlexPublishRetriesCoreToolsOn403(t *testing.T) {
	r := newDeployRun(t)
	out, err := r.runEnv([]string{"FAKE_DENY_PUBLISH=1"}, "FlexConsumption", "publish.sh", "func-x", "rg-test")
	if err != nil {
		t.Fatalf("publish.sh: %v\n%s", err, out)
	}
	if got := r.calls("func "); len(got) != 2 {
		t.Errorf("func calls = %q, want one refused and one retry", got)
	}
	if len(r.calls("curl")) == 0 {
		t.Error("Flex publish did not wait for the app's health")
	}
}

func TestPublishWaitsForTheHostToRun(t *testing.T) {
	r := newDeployRun(t)
	out, err := r.runEnv([]string{"FAKE_HEALTH=503 503 200"}, "ElasticPremium", "publish.sh", "func-x")
	if err != nil {
		t.Fatalf("publish.sh: %v\n%s", err, out)
	}
	if got := len(r.calls("curl")); got != 3 {
		t.Errorf("%d health checks, want 3 (503, 503, 200)", got)
	}
	n := appFunctions(t)
	if !strings.Contains(out, fmt.Sprintf("host answers HTTP 503, %d of %d functions listed", n, n)) {
		t.Errorf("the wait is not shown:\n%s", out)
	}
}

func TestPublishFailsWhenTheHostNeverRuns(t *testing.T) {
	r := newDeployRun(t)
	out, err := r.runEnv([]string{"FAKE_HEALTH=503", "HEALTH_WAIT_SECONDS=45"}, "ElasticPremium", "publish.sh", "func-x")
	if err == nil || !strings.Contains(out, "is not healthy after 45s") {
		t.Fatalf("err %v, output:\n%s", err, out)
	}
	if got := len(r.calls("curl")); got != 4 {
		t.Errorf("%d health checks in 45 s at 15 s intervals, want 4", got)
	}
}

func TestPublishWaitsForEveryFunctionToBeListed(t *testing.T) {
	r := newDeployRun(t)
	out, err := r.runEnv([]string{"FAKE_FUNCTIONS=2", "HEALTH_WAIT_SECONDS=15"}, "ElasticPremium", "publish.sh", "func-x")
	if err == nil || !strings.Contains(out, fmt.Sprintf("2 of %d functions listed", appFunctions(t))) {
		t.Fatalf("err %v, output:\n%s", err, out)
	}
}

// Behind App Service Authentication the unauthenticated probe gets the platform's 401, never the
// host's 200: that is the expected answer there, and only there. FAKE_HTTP_AUTH is the site's
// orders-http-auth tag as the fake az reports it (FunctionKeys by default).
func TestPublishHealthBehindAppServiceAuthentication(t *testing.T) {
	t.Run("EntraID", func(t *testing.T) {
		r := newDeployRun(t)
		out, err := r.runEnv([]string{"FAKE_HTTP_AUTH=EntraID", "FAKE_HEALTH=401", "FAKE_FUNCTIONS=20"}, "ElasticPremium", "publish.sh", "func-x")
		if err != nil || !strings.Contains(out, "func-x is running: host answers 401") || !strings.Contains(out, "App Service Authentication is on") {
			t.Fatalf("err %v, output:\n%s", err, out)
		}
	})
	// A host that answers without a token behind App Service Authentication is an open front
	// door (authentication configured, not enforced): stop at once and say so.
	t.Run("EntraID not enforced", func(t *testing.T) {
		r := newDeployRun(t)
		out, err := r.runEnv([]string{"FAKE_HTTP_AUTH=EntraID", "FAKE_HEALTH=200"}, "FlexConsumption", "publish.sh", "func-x", "rg-test")
		if err == nil || !strings.Contains(out, "it is not enforced on this app") {
			t.Fatalf("err %v, output:\n%s", err, out)
		}
		if got := len(r.calls("curl")); got != 1 {
			t.Errorf("%d health probes, want 1: an open HTTP API is not worth waiting for", got)
		}
	})
	t.Run("FunctionKeys", func(t *testing.T) {
		r := newDeployRun(t)
		out, err := r.runEnv([]string{"FAKE_HEALTH=401", "FAKE_FUNCTIONS=20", "HEALTH_WAIT_SECONDS=15"}, "ElasticPremium", "publish.sh", "func-x")
		if err == nil || !strings.Contains(out, "host answers HTTP 401") {
			t.Fatalf("a 401 without App Service Authentication was taken for a running host: err %v, output:\n%s", err, out)
		}
	})
}

// The spellings of a principal Entra ID does not know yet: ARM's PrincipalNotFound (as the Azure
// CLI prints a failed deployment's JSON, and as azure-core prints it) and Cosmos DB's BadRequest
// for sqlRoleAssignments (which take no principalType that would make ARM wait).
func TestDeployRetriesOnceOnPrincipalNotFound(t *testing.T) {
	for name, msg := range map[string]string{
		"ARM JSON":   `ERROR: {"status":"Failed","error":{"code":"DeploymentFailed","message":"At least one resource deployment operation failed.","details":[{"code":"PrincipalNotFound","message":"Principal 0c7b2f6a5d1e4c9a9d4e3f2a1b0c9d8e does not exist in the directory 5678."}]}}`,
		"azure-core": "ERROR: (DeploymentFailed) At least one resource deployment operation failed.\\nCode: DeploymentFailed\\nMessage: At least one resource deployment operation failed.\\nException Details:\\t(PrincipalNotFound) Principal 1234 does not exist in the directory 5678.\\n\\tCode: PrincipalNotFound\\n\\tMessage: Principal 1234 does not exist in the directory 5678.",
		"Cosmos DB":  `ERROR: {"status":"Failed","error":{"code":"DeploymentFailed","message":"At least one resource deployment operation failed.","details":[{"code":"BadRequest","message":"The provided principal ID [0c7b2f6a-5d1e-4c9a-9d4e-3f2a1b0c9d8e] was not found in the AAD tenant(s) [5678] which are associated with the customer's subscription."}]}}`,
	} {
		t.Run(name, func(t *testing.T) { deployRetriesOnceOn(t, msg, "principal not found") })
	}
}

// Cosmos DB serialises operations that take the account's exclusive lock (sqlRoleAssignments,
// private endpoint connections, backup-policy changes) and refuses a concurrent one with 412.
func TestDeployRetriesOnceOnCosmosExclusiveLock(t *testing.T) {
	for name, msg := range map[string]string{
		"status":  `ERROR: {"status":"Failed","error":{"code":"DeploymentFailed","message":"x","details":[{"code":"PreconditionFailed","message":"Operation failed."}]}}`,
		"message": `ERROR: {"code":"Conflict","message":"There is already an operation in progress which requires an exclusive lock on this service."}`,
	} {
		t.Run(name, func(t *testing.T) { deployRetriesOnceOn(t, msg, "412, exclusive lock") })
	}
}

// A failure is retried for its codes only: a tracking id with 412 or 403 in it, or the words of a
// retried failure inside another error's message, are not the failure.
func TestDeployDoesNotRetryOnIdsAndWords(t *testing.T) {
	for name, msg := range map[string]string{
		"ids with 412": `ERROR: {"status":"Failed","error":{"code":"DeploymentFailed","message":"Tracking id 3f2a1b0c-412f-4c9a-9d4e-412000000412.","details":[{"code":"InvalidTemplate","message":"Deployment template validation failed at line 412. Correlation id 1c2d-0412-aa."}]}}`,
		"words":        `ERROR: {"status":"Failed","error":{"code":"DeploymentFailed","message":"x","details":[{"code":"ResourceNotFound","message":"Not found after PreconditionFailed; principal not found; exclusive lock."}]}}`,
		"plain text":   "ERROR: Deployment failed (412). Correlation ID: 0412-412f.",
	} {
		t.Run(name, func(t *testing.T) {
			r := newDeployRun(t)
			out, err := r.runEnv([]string{"FAKE_PRINCIPAL_NOT_FOUND=1", "FAKE_DEPLOY_ERROR=" + msg}, "ElasticPremium", "deploy.sh", "rg-test", "dev")
			if err == nil || !strings.Contains(out, "so not retried") {
				t.Fatalf("err %v, output:\n%s", err, out)
			}
			if got := len(r.calls("az deployment group create")); got != 1 {
				t.Errorf("%d deployments, want 1", got)
			}
		})
	}
}

// deployRetriesOnceOn: a deployment failing with msg is run once more, and the retry names why.
func deployRetriesOnceOn(t *testing.T, msg, why string) {
	r := newDeployRun(t)
	out, err := r.runEnv([]string{"FAKE_PRINCIPAL_NOT_FOUND=1", "FAKE_DEPLOY_ERROR=" + msg}, "ElasticPremium", "deploy.sh", "rg-test", "dev")
	if err != nil {
		t.Fatalf("deploy.sh: %v\n%s", err, out)
	}
	if got := len(r.calls("az deployment group create")); got != 2 {
		t.Errorf("%d deployments, want 2", got)
	}
	if !strings.Contains(out, "("+why+"): deploying once more in 60s") || len(r.calls("sleep 60")) != 1 {
		t.Errorf("the retry is not announced or not delayed:\n%s", out)
	}
	if len(r.calls("go build")) != 1 || !strings.Contains(out, "func-x is running") {
		t.Errorf("deploy did not publish and wait for health:\n%s", out)
	}
}

func TestDeployRetriesOnlyOnce(t *testing.T) {
	r := newDeployRun(t)
	out, err := r.runEnv([]string{"FAKE_PRINCIPAL_NOT_FOUND=2"}, "ElasticPremium", "deploy.sh", "rg-test", "dev")
	if err == nil || !strings.Contains(out, "deployment failed again") {
		t.Fatalf("err %v, output:\n%s", err, out)
	}
	if got := len(r.calls("az deployment group create")); got != 2 {
		t.Errorf("%d deployments, want 2", got)
	}
	if len(r.calls("go build")) != 0 {
		t.Error("published after a failed deployment")
	}
}

func TestDeployDoesNotRetryOtherErrors(t *testing.T) {
	r := newDeployRun(t)
	out, err := r.runEnv([]string{"FAKE_PRINCIPAL_NOT_FOUND=1", "FAKE_DEPLOY_ERROR=ERROR: InvalidTemplate: bad"}, "ElasticPremium", "deploy.sh", "rg-test", "dev", "hostingPlan=FlexConsumption")
	if err == nil || !strings.Contains(out, "so not retried") {
		t.Fatalf("err %v, output:\n%s", err, out)
	}
	calls := r.calls("az deployment group create")
	if len(calls) != 1 || !strings.Contains(calls[0], "environmentName=dev hostingPlan=FlexConsumption") {
		t.Errorf("deployments = %q", calls)
	}
}

// appFunctions is how many functions the repository's app has.
func appFunctions(t *testing.T) int {
	t.Helper()
	fns, err := filepath.Glob(filepath.Join(repoRoot, "*", "function.json"))
	if err != nil || len(fns) < 3 {
		t.Fatalf("function.json files of the app: %v, %v", fns, err)
	}
	return len(fns)
}
