#!/usr/bin/env bash
# azd's preprovision hook (azure.yaml): deploy bicep/main.bicep through bicep/deploy/deploy.sh, so
# `azd up` meets a brand-new identity ("principal not found") and Cosmos DB's exclusive lock (412)
# with the same retries as make deploy. azd cannot retry its own provisioning: a failed one ends
# `azd up` before any hook could act. With everything deployed here, azd's own provisioning then
# applies the same template with the same parameters to resources that exist, whose principals
# Entra ID knows; the postprovision hook publishes.
#
# The parameters are bicep/main.parameters.json, azd's file, with its ${NAME} and ${NAME=default}
# filled from the azd environment (azd exports it to hooks) as azd fills them; empty ones are left
# to the template's defaults.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=bicep/deploy/lib.sh
. "$root/bicep/deploy/lib.sh"

command -v az >/dev/null || die "the Azure CLI (az) is required"
command -v jq >/dev/null || die "jq is required"
[ -n "${AZURE_ENV_NAME:-}" ] || die "AZURE_ENV_NAME is not set: run this through azd (azd up / azd provision)"
rg=${AZURE_RESOURCE_GROUP:-}
[ -n "$rg" ] || die "set the resource group first: azd env set AZURE_RESOURCE_GROUP rg-orders-$AZURE_ENV_NAME (the template deploys into one resource group)"

if [ "$(az group exists -n "$rg")" != true ]; then
  [ -n "${AZURE_LOCATION:-}" ] || die "resource group $rg does not exist and AZURE_LOCATION is not set: azd env set AZURE_LOCATION <region>"
  echo "creating resource group $rg in $AZURE_LOCATION"
  az group create -n "$rg" -l "$AZURE_LOCATION" -o none
fi

params=()
while IFS= read -r p; do
  params+=("$p")
done < <(jq -r '.parameters | to_entries[] | select(.key != "environmentName")
  | .key as $name | (.value.value | tostring
    | gsub("\\$\\{(?<n>[A-Za-z_][A-Za-z0-9_]*)(=(?<d>[^}]*))?\\}";
        . as $c | if ($ENV | has($c.n)) then $ENV[$c.n] else ($c.d // "") end))
  | select(. != "") | "\($name)=\(.)"' "$root/bicep/main.parameters.json")

"$root/bicep/deploy/deploy.sh" --no-publish "$rg" "$AZURE_ENV_NAME" "${params[@]}"
