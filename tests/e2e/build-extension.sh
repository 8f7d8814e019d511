#!/usr/bin/env bash
# Builds tests/e2e/extension (a Runtime Extension made with Cluster API's own Runtime SDK) once per
# machine into the e2e cache, keyed by a hash of its sources, so that an unchanged extension is
# never rebuilt and a changed one never reused.
#   usage: tests/e2e/build-extension.sh       -> prints the binary's path on its last line
set -euo pipefail

SRC="$(cd "$(dirname "$0")/extension" && pwd)"
CACHE="${CAPI_TOPOLOGY_E2E_CACHE:-$HOME/.cache/capi-topology-e2e}"
key=$(cat "$SRC"/*.go "$SRC/go.mod" "$SRC/go.sum" | sha256sum | cut -c1-16)
BIN="$CACHE/extension-$key/extension"

if [[ -x "$BIN" ]]; then
  echo "$BIN"
  exit 0
fi

command -v go >/dev/null || { echo "go is required to build the test Runtime Extension" >&2; exit 1; }
export GOFLAGS=-trimpath GOCACHE="$CACHE/gocache" GOMODCACHE="$CACHE/gomodcache" GOTOOLCHAIN=local
printf '[e2e-build %s] building the Runtime Extension (about a minute the first time)\n' "$(date -u +%H:%M:%S)" >&2
mkdir -p "$(dirname "$BIN")"
# -mod=readonly: the committed go.sum is the truth; a build must not rewrite it.
# A private temporary name, then a rename: two builds at once (two tests) never clobber each other.
(cd "$SRC" && go build -mod=readonly -o "$BIN.$$" .)
mv "$BIN.$$" "$BIN"
echo "$BIN"
