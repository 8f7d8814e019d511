#!/usr/bin/env bash
# Builds Cluster API's own managers from Go modules into the per-machine e2e cache, once:
# the core manager, the kubeadm control plane and bootstrap managers, and the Docker
# provider's manager (whose in-memory backend simulates Machines without a Docker engine).
# Later runs reuse them. The sources of the modules the tests read (each provider's
# config/default, the Docker provider's class templates) are downloaded too, also when the
# binaries are already there.
#   usage: tests/e2e/build-cluster-api.sh   -> prints the bin directory on its last line
set -euo pipefail

CAPI_VERSION="${CAPI_VERSION:-v1.14.0}"
CACHE="${CAPI_TOPOLOGY_E2E_CACHE:-$HOME/.cache/capi-topology-e2e}"
BIN="$CACHE/cluster-api-$CAPI_VERSION/bin"
# name=package: the binaries and the main packages they are built from.
MANAGERS=(
  "capi-manager=sigs.k8s.io/cluster-api/core"
  "kubeadm-control-plane-manager=sigs.k8s.io/cluster-api/controlplane/kubeadm"
  "kubeadm-bootstrap-manager=sigs.k8s.io/cluster-api/bootstrap/kubeadm"
  "capd-manager=sigs.k8s.io/cluster-api/test/infrastructure/docker"
)

# The modules whose sources the tests read (tests/e2e/cache.rs, CLUSTER_API_MODULES).
SOURCES=("sigs.k8s.io/cluster-api@$CAPI_VERSION" "sigs.k8s.io/cluster-api/test@$CAPI_VERSION")

missing=0
for entry in "${MANAGERS[@]}"; do [[ -x "$BIN/${entry%%=*}" ]] || missing=1; done
for module in "${SOURCES[@]}"; do [[ -d "$CACHE/gomodcache/$module" ]] || missing=1; done
if [[ $missing == 0 ]]; then
  echo "$BIN"
  exit 0
fi

command -v go >/dev/null || { echo "go is required to build Cluster API's managers" >&2; exit 1; }
export GOFLAGS=-trimpath GOCACHE="$CACHE/gocache" GOMODCACHE="$CACHE/gomodcache" GOTOOLCHAIN=local
mkdir -p "$BIN"
log() { printf '[capi-build %s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }

# A throw-away wrapper module that requires Cluster API's modules at one version; their own
# replace directives (to sibling folders) do not apply to a dependency, so every module is
# required by version here.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
cat > go.mod <<MOD
module e2eclusterapi

go 1.26.0

require (
	sigs.k8s.io/cluster-api $CAPI_VERSION
	sigs.k8s.io/cluster-api/api $CAPI_VERSION
	sigs.k8s.io/cluster-api/test $CAPI_VERSION
)
MOD
{
  echo "//go:build tools"
  echo
  echo "package tools"
  echo
  echo "import ("
  for entry in "${MANAGERS[@]}"; do echo "	_ \"${entry#*=}\""; done
  echo ")"
} > tools.go
log "resolving Cluster API $CAPI_VERSION modules"
go mod tidy >/dev/null 2>&1 || go mod tidy
go mod download "${SOURCES[@]}"
for entry in "${MANAGERS[@]}"; do
  name="${entry%%=*}"
  if [[ ! -x "$BIN/$name" ]]; then
    log "building $name from ${entry#*=}"
    go build -o "$BIN/$name" "${entry#*=}"
  fi
done
log "done"
echo "$BIN"
