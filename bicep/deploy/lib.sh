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
  az storage blob upload --auth-mode login --account-name "$ACCOUNT" --container-name "$CONTAINER" \
    --name current.zip --file "$1" --overwrite --only-show-errors -o none
  az functionapp restart -g "$RG" -n "$APP" -o none
  sync_triggers
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
