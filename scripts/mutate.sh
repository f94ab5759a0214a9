#!/usr/bin/env bash
# Mutation testing of the handler's packages with go-gremlins (docs/evidence/testing.md).
#
#   scripts/mutate.sh [package…]     default: every package of the deployed handler
#                                    (internal/layout's TestMutateCoversTheDeployedHandler)
#
# Gremlins' timeout is the coverage run's duration times the coefficient; it
# must cover compiling the mutated package on a busy machine, or mutants are
# reported TIMED OUT instead of killed or surviving. Ctrl-C (SIGINT) stops gremlins; it
# ignores SIGTERM.
# A mutant that hangs is reported TIMED OUT, apart from the killed ones and
# outside the efficacy: gremlins kills `go test` at its timeout, and
# scripts/mutate-exec.sh (the -exec program of go test) makes the test
# binary die with it, instead of running on beside the next mutants.
# Each package is mutated on its own (gremlins changes one operator at a time
# and runs that package's tests), with one worker so the machine stays usable;
# the efficacy (killed / (killed + lived)) must reach the package's floor.
# The integration tests of cosmos/ and handler/ need Cosmos DB: one local
# emulator is started for the whole run unless COSMOS_ENDPOINT is set.
# Results: .local/mutate/<package>.json and .log (internal/hostjson as
# internal_hostjson).
set -euo pipefail
cd "$(dirname "$0")/.."

version=v0.6.0
# Floors: a little under the figures in docs/evidence/testing.md, so that a new
# survivor fails the run and noise from a loaded machine does not. The
# packages with a floor are the ones mutated by default.
declare -A floor=([idempotency]=90 [internal/hostjson]=90 [orders]=90 [retrying]=85 [cosmos]=85 [handler]=85 [httpapi]=85
  [internal/clocks]=85 [internal/requestcharge]=75 [internal/funcapp]=85 [cmd/handler]=85)
packages=("$@")
[ ${#packages[@]} -gt 0 ] || mapfile -t packages < <(printf '%s\n' "${!floor[@]}" | sort)

bin=$PWD/.local/bin
if [ ! -x "$bin/gremlins-$version" ]; then
  mkdir -p "$bin"
  GOBIN=$bin go install "github.com/go-gremlins/gremlins/cmd/gremlins@$version"
  mv "$bin/gremlins" "$bin/gremlins-$version"
fi

if [ -z "${COSMOS_ENDPOINT:-}" ]; then
  export COSMOS_EMULATOR_PORT=${COSMOS_EMULATOR_PORT:-18083}
  ./scripts/emulator.sh start
  trap './scripts/emulator.sh stop' EXIT
  eval "$(./scripts/emulator.sh env)"
  export COSMOS_LOCAL_EMULATOR=1
fi

GOFLAGS="$(go env GOFLAGS)"
export GOFLAGS="${GOFLAGS:+$GOFLAGS }-exec=$PWD/scripts/mutate-exec.sh"

out=.local/mutate
mkdir -p "$out"
failed=()
for p in "${packages[@]}"; do
  [ -n "${floor[$p]:-}" ] || { echo "mutate: no floor for package $p" >&2; exit 2; }
  start=$SECONDS
  name=${p//\//_}
  echo "mutate: $p (floor ${floor[$p]} %)"
  # The stores and suites the tests run on (idemtest, orderstest) are not
  # product code: their mutants would be killed by their own tests only.
  # The floor is checked here: gremlins v0.6.0 exits 0 whatever its
  # --threshold-efficacy says.
  if ! "$bin/gremlins-$version" unleash --workers 1 --timeout-coefficient 20 \
      --exclude-files '(idemtest|orderstest)/' \
      -o "$out/$name.json" "./$p" >"$out/$name.log" 2>&1; then
    failed+=("$p")
  fi
  grep -E 'LIVED|TIMED OUT|Killed:|Timed out:|Test efficacy|Mutator coverage' "$out/$name.log" | sed "s|^|  $p: |"
  efficacy=$(sed -n 's/^Test efficacy: \([0-9.]*\)%.*/\1/p' "$out/$name.log" | tail -n 1)
  if [ -z "$efficacy" ] || ! awk -v e="$efficacy" -v f="${floor[$p]}" 'BEGIN { exit !(e >= f) }'; then
    echo "  $p: efficacy ${efficacy:-unknown} % is under the floor of ${floor[$p]} %"
    failed+=("$p")
  fi
  echo "  $p: $((SECONDS - start)) s"
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "mutate: below the floor (or failed): ${failed[*]}; see $out/<package>.log" >&2
  exit 1
fi
