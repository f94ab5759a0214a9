#!/usr/bin/env bash
# Deploy bicep/main.bicep into an existing resource group, then publish the handler and wait
# for it to run (make deploy).
#
#   bicep/deploy/deploy.sh [--no-publish] <resource-group> <environment-name> [name=value ...]
#
# Extra arguments are template parameters (deployerPrincipalId=..., hostingPlan=FlexConsumption).
# --no-publish stops after the deployment (azd's preprovision hook, bicep/deploy/azd-provision.sh).
# Two failures are transient and the deployment is run once more after PRINCIPAL_RETRY_DELAY
# seconds (default 60): Entra ID does not know the new identity yet ("principal not found"; Cosmos
# role assignments take no principalType that would let ARM wait for it), or Cosmos DB refused an
# operation with 412 because another one held the account's exclusive lock (the template orders
# its own, but a portal change or a backup-policy migration can hold it). Both are recognised by
# the error codes of the JSON error (lib.sh, azure_errors), never by digits in its text. Any
# other failure stops.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=bicep/deploy/lib.sh
. "$root/bicep/deploy/lib.sh"

publish=true
if [ "${1:-}" = --no-publish ]; then
  publish=false
  shift
fi
[ $# -ge 2 ] || die "usage: $0 [--no-publish] <resource-group> <environment-name> [name=value ...]"
rg=$1 env=$2
shift 2
command -v az >/dev/null || die "the Azure CLI (az) is required"
command -v jq >/dev/null || die "jq is required (it reads Azure's JSON errors)"

err=$(mktemp)
trap 'rm -f "$err"' EXIT

deploy() {
  echo "deploying bicep/main.bicep to $rg (environment $env): about 10 minutes"
  az deployment group create -n main -g "$rg" -f "$root/bicep/main.bicep" \
    -p environmentName="$env" "$@" -o none 2>"$err"
}

if ! deploy "$@"; then
  cat "$err" >&2
  delay=${PRINCIPAL_RETRY_DELAY:-60}
  if principal_not_found "$err"; then
    echo "the new identity has not reached Entra ID yet (principal not found): deploying once more in ${delay}s" >&2
  elif cosmos_busy "$err"; then
    echo "Cosmos DB was busy with another operation on the account (412, exclusive lock): deploying once more in ${delay}s" >&2
  else
    die "deployment failed (neither 'principal not found' nor Cosmos DB's 412 exclusive lock, so not retried)"
  fi
  sleep "$delay"
  if ! deploy "$@"; then
    cat "$err" >&2
    die "deployment failed again; run make deploy once more when Entra ID has caught up"
  fi
fi

if ! $publish; then
  exit 0
fi
app=$(az deployment group show -g "$rg" -n main --query properties.outputs.AZURE_FUNCTION_APP_NAME.value -o tsv)
[ -n "$app" ] || die "the deployment has no AZURE_FUNCTION_APP_NAME output"
"$root/bicep/deploy/publish.sh" "$app" "$rg"
