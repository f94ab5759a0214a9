#!/usr/bin/env bash
# staticcheck (honnef.co/go/tools) over this module and the tools' own
# modules, with its default checks; any finding fails (make vet, so make test
# and CI). A finding kept on purpose carries a `//lint:ignore CHECK reason`
# on the line before it (CONTRIBUTING.md).
#
# Pinned like govulncheck (scripts/vulncheck.sh): built once from the module
# proxy into .local/staticcheck/bin (git-ignored), again when the version
# below or the Go release changes. Its analysis cache is staticcheck's own
# (~/.cache/staticcheck).
set -euo pipefail
cd "$(dirname "$0")/.."

VERSION=v0.8.2                # honnef.co/go/tools
MODULES=(. tools/bicepcheck tools/vulngate)

bin=$PWD/.local/staticcheck/bin
goversion=$(go env GOVERSION)
# built: the binary exists, from that module version, with this Go release.
built() {
  [ -x "$bin/staticcheck" ] || return 1
  local info
  info=$(go version -m "$bin/staticcheck" 2>/dev/null) || return 1
  grep -q "^$bin/staticcheck: $goversion\$" <<<"$info" &&
    grep -Eq "^[[:space:]]+mod[[:space:]]+honnef.co/go/tools[[:space:]]+$VERSION([[:space:]]|$)" <<<"$info"
}

if ! built; then
  echo "staticcheck: building $VERSION with $goversion" >&2
  mkdir -p "$bin"
  GOBIN=$bin GOFLAGS=-mod=mod go install "honnef.co/go/tools/cmd/staticcheck@$VERSION"
fi

failed=()
for m in "${MODULES[@]}"; do
  (cd "$m" && "$bin/staticcheck" ./...) || failed+=("$m")
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "staticcheck: findings in ${failed[*]}" >&2
  exit 1
fi
