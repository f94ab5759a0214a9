#!/usr/bin/env bash
# Build the handler for linux/amd64 and deploy it to a function app made by bicep/main.bicep.
#
#   bicep/deploy/publish.sh <function-app-name> [resource-group]
#
# Without arguments it uses the azd environment values AZURE_FUNCTION_APP_NAME and
# AZURE_RESOURCE_GROUP (azure.yaml runs it after azd provision).
#
# Elastic Premium (the default plan) runs from a package blob, not from an Azure Files share
# (docs/adr/0004-hosting-plan.md): the package is zipped here, uploaded with your Entra
# identity as releases/<version>.zip and current.zip, then the app restarts and its triggers
# are synced. `func azure functionapp publish` cannot do this: on Linux Elastic Premium it
# uploads through an AzureWebJobsStorage connection string, which this deployment does not have.
# Flex Consumption: `func azure functionapp publish <app> --custom` (Core Tools 4.x).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=bicep/deploy/lib.sh
. "$root/bicep/deploy/lib.sh"

app=${1:-${AZURE_FUNCTION_APP_NAME:-}}
[ -n "$app" ] || die "usage: $0 <function-app-name> [resource-group]"
resolve_app "$app" "${2:-${AZURE_RESOURCE_GROUP:-}}"

cd "$root"
echo "building bin/handler for linux/amd64"
GOOS=linux GOARCH=amd64 CGO_ENABLED=0 go build -trimpath -o bin/handler ./cmd/handler

case "$PLAN" in
FlexConsumption)
  command -v func >/dev/null || die "Azure Functions Core Tools 4.x (func) is required to publish to Flex Consumption"
  # Core Tools packages the folder through .funcignore (an allowlist: host.json, bin/handler,
  # */function.json); the platform then writes the package into the deployment container
  # with the app's identity, whose Blob Data Owner role may still be propagating.
  retry_auth "func azure functionapp publish" func azure functionapp publish "$APP" --custom
  ;;
ElasticPremium)
  command -v zip >/dev/null || die "zip is required"
  version="$(date -u +%Y%m%dT%H%M%SZ)-$(git rev-parse --short HEAD 2>/dev/null || echo nogit)"
  if [ -n "$(git status --porcelain 2>/dev/null)" ]; then
    version="$version-dirty"
  fi
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  pkg="$work/$version.zip"
  # Exactly what the host runs: host.json, the executable (zip keeps its mode bits) and one
  # folder per function. Nothing else, whatever .funcignore says.
  zip -q -X "$pkg" host.json bin/handler ./*/function.json
  unzip -l "$pkg"
  retry_auth "upload releases/$version.zip" az storage blob upload --auth-mode login --account-name "$ACCOUNT" \
    --container-name "$CONTAINER" --name "releases/$version.zip" --file "$pkg" --only-show-errors -o none
  activate_package "$pkg"
  echo "published release $version to $APP"
  echo "roll back with: bicep/deploy/rollback.sh $APP <release> $RG   (list releases: bicep/deploy/rollback.sh $APP)"
  ;;
*)
  die "unknown hosting plan tag '$PLAN' on $APP"
  ;;
esac

functions=(./*/function.json)
wait_healthy "${#functions[@]}"
