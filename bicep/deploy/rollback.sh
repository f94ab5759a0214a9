#!/usr/bin/env bash
# Put an earlier release back on an Elastic Premium function app made by bicep/main.bicep.
#
#   bicep/deploy/rollback.sh <function-app-name>                        list the releases
#   bicep/deploy/rollback.sh <function-app-name> <release> [resource-group]   run that release
#
# A release is a package publish.sh kept as releases/<release>.zip in the app's package
# container. Flex Consumption keeps only the last package: roll back there by publishing the
# previous commit again (docs/runbook.md#roll-back-a-bad-deployment).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=bicep/deploy/lib.sh
. "$root/bicep/deploy/lib.sh"

app=${1:-${AZURE_FUNCTION_APP_NAME:-}}
[ -n "$app" ] || die "usage: $0 <function-app-name> [release] [resource-group]"
release=${2:-}
resolve_app "$app" "${3:-${AZURE_RESOURCE_GROUP:-}}"

[ "$PLAN" = ElasticPremium ] || die "$APP runs on $PLAN: check out the last good commit and run bicep/deploy/publish.sh $APP"

if [ -z "$release" ]; then
  echo "releases of $APP (oldest first):"
  az storage blob list --auth-mode login --account-name "$ACCOUNT" --container-name "$CONTAINER" \
    --prefix releases/ --query "sort_by([], &properties.creationTime)[].name" -o tsv | sed 's#^releases/##; s#\.zip$##'
  exit 0
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
az storage blob download --auth-mode login --account-name "$ACCOUNT" --container-name "$CONTAINER" \
  --name "releases/$release.zip" --file "$work/$release.zip" --only-show-errors -o none
activate_package "$work/$release.zip"
wait_healthy "$(unzip -Z1 "$work/$release.zip" | grep -c '/function.json$' || true)"
echo "$APP now runs release $release"
