#!/usr/bin/env bash
# make plant PLANT=NAME: shows that the history check catches a bug every
# end-state check misses. It builds bin/handler-plant from this tree with
# testbed/plants/NAME.patch applied (go build -overlay: the tree is not
# touched), runs make run (PLANT_RUN=run) or make chaos (PLANT_RUN=chaos)
# with it and PLANT_ARGS, and exits 0 only when the run failed on the history
# check and on nothing else. docs/evidence/testing.md lists the plants.
set -euo pipefail
cd "$(dirname "$0")/../.."

name=${PLANT:?PLANT=NAME, one of: $(cd testbed/plants && ls | sed 's/\.patch$//' | tr '\n' ' ')}
patch=testbed/plants/$name.patch
[ -f "$patch" ] || { echo "plant: no $patch" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
files=$(sed -n 's|^+++ b/||p' "$patch")
for f in $files; do
  mkdir -p "$tmp/$(dirname "$f")" && cp "$f" "$tmp/$f"
done
(cd "$tmp" && patch -s -p1) < "$patch"
replace=$(for f in $files; do printf '"%s":"%s",' "$PWD/$f" "$tmp/$f"; done)
printf '{"Replace":{%s}}' "${replace%,}" > "$tmp/overlay.json"
CGO_ENABLED=0 go build -overlay "$tmp/overlay.json" -o bin/handler-plant ./cmd/handler

read -r -a args <<< "${PLANT_ARGS:-}"
rc=0
case ${PLANT_RUN:-run} in
  run) ./testbed/scripts/run-local.sh -no-progress -executable bin/handler-plant "${args[@]}" | tee "$tmp/report" || rc=$? ;;
  chaos) ./testbed/scripts/chaos.sh -executable bin/handler-plant "${args[@]}" | tee "$tmp/report" || rc=$? ;;
  *) echo "plant: PLANT_RUN=${PLANT_RUN} is neither run nor chaos" >&2; exit 2 ;;
esac
failed=$(grep '^    FAIL ' "$tmp/report" || true)
if [ "$rc" -ne 0 ] && [ -n "$failed" ] && ! grep -qv 'FAIL history:' <<< "$failed"; then
  echo "plant $name: caught by the history check alone"
  exit 0
fi
echo "plant $name: NOT shown (exit $rc; failed checks: ${failed:-none})" >&2
exit 1
