#!/usr/bin/env bash
# Builds the real kube-apiserver, kubectl and etcd from Go modules (no prebuilt downloads are
# possible here) into a per-machine cache, once; later runs reuse them.
#   usage: tests/e2e/build-binaries.sh        -> prints the bin directory on its last line
set -euo pipefail

K8S_VERSION="${K8S_VERSION:-v1.34.4}"
ETCD_VERSION="${ETCD_VERSION:-v3.6.16}"
GO_MINIMUM="1.26"
CACHE="${CAPI_TOPOLOGY_E2E_CACHE:-$HOME/.cache/capi-topology-e2e}"
BIN="$CACHE/k8s-$K8S_VERSION-etcd-$ETCD_VERSION/bin"

# A binary counts as built when it reports the version it was built from: Go module builds
# carry no version unless it is stamped at link time, and Cluster API's managers refuse an API
# server whose /version is "v0.0.0-master" (an unstamped binary from an older cache is relinked).
stamped() { [[ -x "$BIN/$1" ]] && "$BIN/$1" --version 2>/dev/null | grep -q "$K8S_VERSION"; }
if stamped kube-apiserver && stamped kube-controller-manager && [[ -x "$BIN/kubectl" && -x "$BIN/etcd" ]]; then
  echo "$BIN"
  exit 0
fi

command -v go >/dev/null || { echo "go is required to build the e2e binaries (Go $GO_MINIMUM or later)" >&2; exit 1; }
# etcd $ETCD_VERSION's go.mod declares go $GO_MINIMUM, and GOTOOLCHAIN=local (below) forbids
# downloading a newer toolchain, so an older local Go cannot build it: say so before building.
go_version=$(go env GOVERSION | sed 's/^go//')
if [[ "$(printf '%s\n%s\n' "$GO_MINIMUM" "$go_version" | sort -V | head -1)" != "$GO_MINIMUM" ]]; then
  echo "Go $go_version is too old to build etcd $ETCD_VERSION and kube-apiserver $K8S_VERSION: install Go $GO_MINIMUM or later" >&2
  exit 1
fi
export GOFLAGS=-trimpath GOCACHE="$CACHE/gocache" GOMODCACHE="$CACHE/gomodcache" GOTOOLCHAIN=local
mkdir -p "$BIN"
log() { printf '[e2e-build %s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }

# kube-apiserver and kubectl: a throw-away wrapper module that pins every staging module.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
minor="${K8S_VERSION#v1.}"
staging_version="v0.${minor}"
log "resolving k8s.io/kubernetes $K8S_VERSION"
gomod=$(cd "$work" && go mod download -json "k8s.io/kubernetes@$K8S_VERSION" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
mkdir -p "$work/k8s" && cd "$work/k8s"
{
  echo "module e2ebinaries"
  echo
  echo "go 1.24"
  echo
  echo "require k8s.io/kubernetes $K8S_VERSION"
  echo
  grep -E '^\s+k8s\.io/[a-z0-9-]+ v0\.0\.0\s*$' "$gomod" | awk -v v="$staging_version" '{print "replace " $1 " => " $1 " " v}'
} > go.mod
cat > tools.go <<'GO'
//go:build tools

package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kubectl"
)
GO
log "downloading modules for kube-apiserver and kubectl"
go mod tidy >/dev/null 2>&1 || go mod tidy
# Each binary is built only when missing, so adding one to the list does not rebuild the others.
version_pkg=k8s.io/component-base/version
ldflags="-X $version_pkg.gitVersion=$K8S_VERSION -X $version_pkg.gitMajor=1 -X $version_pkg.gitMinor=${minor%%.*} -X $version_pkg.gitTreeState=clean"
for cmd in kube-apiserver kubectl kube-controller-manager; do
  if [[ ! -x "$BIN/$cmd" ]] || { [[ $cmd != kubectl ]] && ! stamped "$cmd"; }; then
    log "building $cmd (first run only: time and disk in README.md, Prerequisites)"
    go build -ldflags "$ldflags" -o "$BIN/$cmd" "k8s.io/kubernetes/cmd/$cmd"
  fi
done

# etcd: a wrapper whose main is etcd's own entry point.
if [[ -x "$BIN/etcd" ]]; then
  log "done"
  echo "$BIN"
  exit 0
fi
mkdir -p "$work/etcd" && cd "$work/etcd"
cat > go.mod <<MOD
module e2eetcd

go 1.24

require go.etcd.io/etcd/server/v3 $ETCD_VERSION
MOD
cat > main.go <<'GO'
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
GO
log "building etcd $ETCD_VERSION"
go mod tidy >/dev/null 2>&1 || go mod tidy
go build -o "$BIN/etcd" .
log "done"
echo "$BIN"
