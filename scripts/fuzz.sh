#!/usr/bin/env bash
# Runs every fuzz target in the module for a bounded time each.
#
#   scripts/fuzz.sh [FUZZTIME]     default 10s per target (what CI runs)
#   scripts/fuzz.sh 10m            the longer run of docs/fuzzing.md
#
# FUZZMINIMIZETIME (default 2s) bounds the minimisation of each new input:
# the handler targets cost ~0.5 ms an execution, and Go's default of 60 s
# would spend a 10 s run minimising instead of fuzzing.
#
# Targets are found by name (func FuzzXxx in *_test.go), so new ones join
# without a change here. They need no Cosmos DB (the test binaries start one
# only for the tests that ask, cosmostest.Shared). A failing input is written
# to <package>/testdata/fuzz/<target>/ and the script exits non-zero.
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime=${1:-${FUZZTIME:-10s}}
minimize=${FUZZMINIMIZETIME:-2s}

# "dir target" pairs, in a stable order; tools/ holds separate modules.
mapfile -t targets < <(grep -rHo --include='*_test.go' '^func Fuzz[A-Za-z0-9_]*' . \
  | grep -v '^\./tools/' | sed -E 's#^\./(.*)/[^/]+_test\.go:func (Fuzz[A-Za-z0-9_]*)$#\1 \2#' | sort -u)
[ ${#targets[@]} -gt 0 ] || { echo "fuzz: no fuzz targets found" >&2; exit 1; }

# crashers DIR NAME: how many failing inputs are stored for the target.
crashers() { { find "$1/testdata/fuzz/$2" -type f 2>/dev/null || true; } | wc -l; }

# fuzz_one DIR NAME: one bounded run. Go's fuzz coordinator before go1.27 can
# fail a -fuzztime run at its deadline with a bare "context deadline
# exceeded" and no failing input (golang/go#75804, a race with the
# workers' context, likelier on a loaded machine). Such a run is tried once
# more; a failure that wrote an input, or any other failure, stands.
fuzz_one() {
  local dir=$1 name=$2 out before status
  out=$(mktemp)
  for attempt in 1 2; do
    before=$(crashers "$dir" "$name")
    set +e
    go test -run '^$' -fuzz "^${name}\$" -fuzztime "$fuzztime" -fuzzminimizetime "$minimize" "./$dir" 2>&1 | tee "$out"
    status=${PIPESTATUS[0]}
    set -e
    [ "$status" -eq 0 ] && { rm -f "$out"; return 0; }
    if [ "$attempt" -eq 1 ] && [ "$(crashers "$dir" "$name")" -eq "$before" ] &&
      grep -q '^    context deadline exceeded$' "$out" && ! grep -q 'Failing input written' "$out"; then
      echo "fuzz: $name stopped at its deadline with no failing input (golang/go#75804); running it again"
      continue
    fi
    rm -f "$out"
    return "$status"
  done
}

start=$SECONDS
for t in "${targets[@]}"; do
  dir=${t% *}; name=${t#* }
  echo "fuzz: $name in ./$dir for $fuzztime"
  fuzz_one "$dir" "$name"
done
echo "fuzz: ${#targets[@]} targets, $fuzztime each, $((SECONDS - start)) s in all"
