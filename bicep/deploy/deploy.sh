#!/usr/bin/env bash
# Deploy bicep/main.bicep into an existing resource group, then publish the handler and wait
# for it to run (make deploy).
#
#   bicep/deploy/deploy.sh <resource-group> <environment-name> [name=value ...]
#
# Extra arguments are template parameters (deployerPrincipalId=..., hostingPlan=FlexConsumption).
# Two failures are transient and the deployment is run once more after PRINCIPAL_RETRY_DELAY
# seconds (default 60): Entra ID does not know the new identity yet ("principal not found"; Cosmos
# role assignments take no principalType that would let ARM wait for it), or Cosmos DB refused an
# operation with 412 because another one held the account's exclusive lock (the template orders
# its own, but a portal change or a backup-policy migration can hold it). Any other failure stops.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=bicep/deploy/lib.sh
. "$root/bicep/deploy/lib.sh"

[ $# -ge 2 ] || die "usage: $0 <resource-group> <environment-name> [name=value ...]"
rg=$1 env=$2
shift 2
command -v az >/dev/null || die "the Azure CLI (az) is required"

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
  if grep -Eqi 'PrincipalNotFound|principal.{0,80}(not found|does not exist)' "$err"; then
    echo "the new identity has not reached Entra ID yet (principal not found): deploying once more in ${delay}s" >&2
  elif grep -Eqi 'exclusive lock|PreconditionFailed|(^|[^0-9])412([^0-9]|$)' "$err"; then
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

app=$(az deployment group show -g "$rg" -n main --query properties.outputs.AZURE_FUNCTION_APP_NAME.value -o tsv)
[ -n "$app" ] || die "the deployment has no AZURE_FUNCTION_APP_NAME output"
"$root/bicep/deploy/publish.sh" "$app" "$rg"
