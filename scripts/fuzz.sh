#!/usr/bin/env bash
# Runs every fuzz target in the module for a bounded time each.
#
#   make fuzz                      10s per target (what CI runs)
#   make fuzz FUZZTIME=10m         the longer run of docs/fuzzing.md
#
# FUZZMINIMIZETIME (default 2s) bounds the minimisation of each new input:
# the handler targets cost ~0.5 ms an execution, and Go's default of 60 s
# would spend a 10 s run minimising instead of fuzzing.
#
# Targets are found by name (func FuzzXxx in *_test.go), so new ones join
# without a change here. They need no Cosmos DB (the test binaries start one
# only for the tests that ask, cosmostest.Shared). A failing input is written
# to <package>/testdata/fuzz/<target>/ and the script exits non-zero. Run it
# with the Makefile's Go (make fuzz): Go before 1.27 can fail a -fuzztime run
# at its deadline with no failing input (golang/go#75804).
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime=${1:-${FUZZTIME:-10s}}
minimize=${FUZZMINIMIZETIME:-2s}

# "dir target" pairs, in a stable order; tools/ holds separate modules.
mapfile -t targets < <(grep -rHo --include='*_test.go' '^func Fuzz[A-Za-z0-9_]*' . \
  | grep -v '^\./tools/' | sed -E 's#^\./(.*)/[^/]+_test\.go:func (Fuzz[A-Za-z0-9_]*)$#\1 \2#' | sort -u)
[ ${#targets[@]} -gt 0 ] || { echo "fuzz: no fuzz targets found" >&2; exit 1; }

start=$SECONDS
for t in "${targets[@]}"; do
  dir=${t% *}; name=${t#* }
  echo "fuzz: $name in ./$dir for $fuzztime"
  go test -run '^$' -fuzz "^${name}\$" -fuzztime "$fuzztime" -fuzzminimizetime "$minimize" "./$dir"
done
echo "fuzz: ${#targets[@]} targets, $fuzztime each, $((SECONDS - start)) s in all"
