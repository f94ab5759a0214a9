#!/usr/bin/env bash
# govulncheck without vuln.go.dev: the vulnerability database is built from
# the pinned golang.org/x/vulndb module (its data/osv/*.json), which the Go
# module proxy serves like any module, with that module's own cmd/indexdb.
#
#   scripts/vulncheck.sh          scan ./..., fail on a reachable finding not in
#                               scripts/vulncheck-accepted.txt
#
# Everything is cached under .local/ (git-ignored): the tools in
# .local/vulncheck/bin, the database in .local/vulndb/<vulndb version>.
# The database is as of the pinned module's commit date. To move it forward:
# set VULNDB_VERSION to a newer pseudo-version (`go mod download -json
# golang.org/x/vulndb@<commit>` prints it), run make vulncheck, fix or accept
# what it reports, and update the date in docs/security.md.
set -euo pipefail
cd "$(dirname "$0")/.."

VULN_VERSION=v1.9.0                                   # golang.org/x/vuln (govulncheck)
VULNDB_VERSION=v0.0.0-20261105234957-e22db6528018     # golang.org/x/vulndb: the database snapshot

root=$PWD
bin=$root/.local/vulncheck/bin
db=$root/.local/vulndb/$VULNDB_VERSION
out=$root/.local/vulncheck/govulncheck.json
say() { printf 'vulncheck: %s\n' "$*" >&2; }

# has BINARY MODULE VERSION: the binary exists and was built from that module version.
has() { [ -x "$1" ] && go version -m "$1" 2>/dev/null | grep -Eq "^[[:space:]]+mod[[:space:]]+$2[[:space:]]+$3([[:space:]]|$)"; }

mkdir -p "$bin"
if ! has "$bin/govulncheck" golang.org/x/vuln "$VULN_VERSION"; then
  say "building govulncheck $VULN_VERSION"
  GOBIN=$bin GOFLAGS=-mod=mod go install "golang.org/x/vuln/cmd/govulncheck@$VULN_VERSION"
fi

if [ ! -f "$db/index/db.json" ]; then
  if ! has "$bin/indexdb" golang.org/x/vulndb "$VULNDB_VERSION"; then
    say "building indexdb from golang.org/x/vulndb $VULNDB_VERSION"
    GOBIN=$bin GOFLAGS=-mod=mod go install "golang.org/x/vulndb/cmd/indexdb@$VULNDB_VERSION"
  fi
  src=$(cd /tmp && GOFLAGS=-mod=mod go mod download -json "golang.org/x/vulndb@$VULNDB_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  [ -d "$src/data/osv" ] || { say "no data/osv in golang.org/x/vulndb@$VULNDB_VERSION ($src)"; exit 1; }
  say "indexing $(ls "$src/data/osv" | wc -l) OSV entries into $db"
  rm -rf "$db.tmp"
  "$bin/indexdb" -vulns "$src/data/osv" -out "$db.tmp"
  # indexdb leaves the database's modified time at zero; record the snapshot
  # date instead (the module's commit time, from its pseudo-version), which
  # govulncheck reports as db_last_modified.
  stamp=$(cut -d- -f2 <<<"$VULNDB_VERSION")   # v0.0.0-YYYYMMDDhhmmss-commit
  modified="${stamp:0:4}-${stamp:4:2}-${stamp:6:2}T${stamp:8:2}:${stamp:10:2}:${stamp:12:2}Z"
  printf '{"modified":"%s"}' "$modified" > "$db.tmp/index/db.json"
  gzip -c "$db.tmp/index/db.json" > "$db.tmp/index/db.json.gz"
  rm -rf "$db" && mv "$db.tmp" "$db"
fi

say "scanning ./... with govulncheck $VULN_VERSION against $db"
"$bin/govulncheck" -db "file://$db" -format json ./... > "$out"
(cd tools/vulngate && go run . -accepted "$root/scripts/vulncheck-accepted.txt" "$out")
