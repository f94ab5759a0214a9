# Shared by publish.sh and rollback.sh; sourced, not run.
# Needs the Azure CLI, signed in (az login) to the subscription that holds the app.

die() {
  echo "$*" >&2
  exit 1
}

# resolve_app APP [RESOURCE_GROUP] sets APP, RG, APP_ID, PLAN, ACCOUNT and CONTAINER from the
# site and the tags bicep/modules/functionapp.bicep puts on it.
resolve_app() {
  APP=$1
  RG=${2:-}
  command -v az >/dev/null || die "the Azure CLI (az) is required"
  command -v jq >/dev/null || die "jq is required (it reads Azure's JSON errors)"
  if [ -z "$RG" ]; then
    RG=$(az functionapp list --query "[?name=='$APP'].resourceGroup | [0]" -o tsv)
    [ -n "$RG" ] || die "function app $APP not found in the current subscription (az account show)"
  fi
  IFS=$'\t' read -r APP_ID PLAN ACCOUNT CONTAINER < <(az functionapp show -g "$RG" -n "$APP" \
    --query '[id, tags."orders-hosting-plan", tags."orders-package-account", tags."orders-package-container"]' -o tsv | paste -s -d '\t')
  [ -n "${PLAN:-}" ] || die "$APP has no orders-hosting-plan tag: deploy it from bicep/main.bicep first"
}

# activate_package ZIP makes ZIP the running code on Elastic Premium: WEBSITE_RUN_FROM_PACKAGE
# points at <container>/current.zip, read with the app's managed identity. The URL does not
# change, so the app loads the new content only after a restart, and the platform learns the
# (possibly changed) triggers only from a trigger sync.
activate_package() {
  retry_auth "upload current.zip" az storage blob upload --auth-mode login --account-name "$ACCOUNT" \
    --container-name "$CONTAINER" --name current.zip --file "$1" --overwrite --only-show-errors -o none
  az functionapp restart -g "$RG" -n "$APP" -o none
  sync_triggers
}

# azure_errors FILE prints each Azure error FILE holds, one per line: its code, a tab, its message.
# It reads the error's structured fields only, never digits in free text (a request or activity
# id such as ...-412f-... or ...403... is not a status): the JSON the Azure CLI prints after
# "ERROR: " (ARM's error and every nested one under details; a message that is itself JSON is
# read too), azure-core's "Code: <code>" line and Azure Storage's "ErrorCode:<code>" line.
azure_errors() {
  local json
  json=$(sed -n '/{/,$p' "$1" | sed '1s/^[^{]*//')
  if [ -n "$json" ]; then
    jq -r 'def errors: .. | objects | select(.code | type == "string") | [.code, (.message // "" | tostring)];
      (errors), (.. | objects | .message? | strings | fromjson? | errors) | @tsv' <<<"$json" 2>/dev/null || true
  fi
  sed -nE 's/^[[:space:]]*(Code|ErrorCode):[[:space:]]*([A-Za-z]+)[[:space:]]*$/\2\t/p' "$1"
}

# error_matches FILE AWK-CONDITION: some error of FILE (azure_errors; $1 its code, $2 its
# message in lower case) satisfies the condition.
error_matches() {
  local condition=$2
  azure_errors "$1" | awk -F '\t' '{ $2 = tolower($2) } '"$condition"' { found = 1 } END { exit !found }'
}

# principal_not_found FILE: Entra ID does not know a new identity yet. ARM answers
# PrincipalNotFound; Cosmos DB's sqlRoleAssignments answer BadRequest "The provided principal ID
# [...] was not found in the AAD tenant(s)".
principal_not_found() {
  error_matches "$1" '$1 == "PrincipalNotFound" || ($1 == "BadRequest" && $2 ~ /principal id .*(was not found|does not exist)/)'
}

# cosmos_busy FILE: Cosmos DB refused an operation because another one held the account's
# exclusive lock: PreconditionFailed, or Conflict "There is already an operation in progress
# which requires an exclusive lock".
cosmos_busy() {
  error_matches "$1" '$1 == "PreconditionFailed" || ($1 == "Conflict" && $2 ~ /exclusive lock/)'
}

# authorization_refused FILE: the 401/403 of a role assignment still propagating, by its code:
# ARM's AuthorizationFailed, Storage's AuthorizationPermissionMismatch or AuthorizationFailure,
# or the HTTP status name Core Tools prints in parentheses, "(Forbidden)" or "(Unauthorized)".
authorization_refused() {
  error_matches "$1" '$1 ~ /^(AuthorizationFailed|AuthorizationPermissionMismatch|AuthorizationFailure|Forbidden|Unauthorized)$/' ||
    grep -Eq '\((Forbidden|Unauthorized)\)' "$1"
}

# retry_auth WHAT COMMAND... runs COMMAND and, while it fails with 401/403 (authorization_refused),
# runs it again with back-off (10 s doubling to 60 s) for at most ROLE_WAIT_SECONDS (default 600)
# of waiting. Right after `az deployment group create` or `azd provision` the role assignments the
# same deployment made (Storage Blob Data Contributor for you, Blob Data Owner for the app) take
# minutes to reach the data plane, which answers 403 meanwhile. Any other failure stops at once.
retry_auth() {
  local what=$1 waited=0 delay=10 budget=${ROLE_WAIT_SECONDS:-600} err
  shift
  err=$(mktemp)
  until "$@" 2>"$err"; do
    if ! authorization_refused "$err"; then
      cat "$err" >&2
      rm -f "$err"
      die "$what failed (not an authorization error, so not retried)"
    fi
    if [ "$waited" -ge "$budget" ]; then
      cat "$err" >&2
      rm -f "$err"
      die "$what still refused (401/403) after ${waited}s: check the role assignments of bicep/modules/rbac.bicep (deployerPrincipalId) and run publish again"
    fi
    echo "$what: refused with 401/403; new role assignments take minutes to propagate, retrying in ${delay}s (waited ${waited}s of ${budget}s)" >&2
    sleep "$delay"
    waited=$((waited + delay))
    delay=$((delay * 2 > 60 ? 60 : delay * 2))
  done
  rm -f "$err"
}

# wait_healthy N waits until the app's host answers its home page with 200 (503 while the host
# is not running) and the platform lists at least N functions (the trigger sync reached it),
# checking every 15 s for at most HEALTH_WAIT_SECONDS (default 300). With App Service
# Authentication in front (tag orders-http-auth EntraID) the platform answers this unauthenticated
# probe 401 before the host sees it, so 401 is the expected answer and only the function list
# says the host indexed the functions.
wait_healthy() {
  local want=$1 waited=0 budget=${HEALTH_WAIT_SECONDS:-300} host code listed expect=200
  host=$(az functionapp show -g "$RG" -n "$APP" --query defaultHostName -o tsv)
  if [ "$(az functionapp show -g "$RG" -n "$APP" --query 'tags."orders-http-auth"' -o tsv)" = EntraID ]; then
    expect=401
    echo "App Service Authentication is on: the home page answers 401 to this probe; the functions the platform lists show the host runs"
  fi
  echo "waiting up to ${budget}s for $APP to run: https://$host/ must answer $expect and $want functions be listed"
  while :; do
    code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 10 "https://$host/" || true)
    listed=$(az functionapp function list -g "$RG" -n "$APP" --query "[].name" -o tsv 2>/dev/null | grep -c . || true)
    if [ "$code" = "$expect" ] && [ "$listed" -ge "$want" ]; then
      echo "$APP is running: host answers $expect, $listed functions listed"
      return 0
    fi
    # The host itself answered a request that carried no token: authentication is configured but
    # not enforced (docs/deploy.md#with-entra-id-in-front-app-service-authentication).
    if [ "$expect" = 401 ] && [ "$code" = 200 ]; then
      die "$APP answered 200 to a request without a token although App Service Authentication is on: it is not enforced on this app; do not hand out its URL, see docs/deploy.md"
    fi
    if [ "$waited" -ge "$budget" ]; then
      die "$APP is not healthy after ${waited}s (host answers HTTP ${code:-none}, $listed of $want functions listed): see docs/runbook.md and the app's log stream in Application Insights"
    fi
    echo "  host answers HTTP ${code:-none}, $listed of $want functions listed; checking again in 15s (waited ${waited}s of ${budget}s)"
    sleep 15
    waited=$((waited + 15))
  done
}

sync_triggers() {
  local arm attempt
  arm=$(az cloud show --query endpoints.resourceManager -o tsv)
  for attempt in 1 2 3 4 5; do
    if az rest --method post --url "${arm%/}${APP_ID}/syncfunctiontriggers?api-version=2022-03-01" -o none 2>/dev/null; then
      return 0
    fi
    echo "trigger sync not accepted yet (attempt $attempt); retrying in 15 s" >&2
    sleep 15
  done
  die "trigger sync failed; run: az rest --method post --url '${arm%/}${APP_ID}/syncfunctiontriggers?api-version=2022-03-01'"
}
