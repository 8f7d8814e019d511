#!/usr/bin/env bash
# Refreshes tests/fixtures/contract/providers/: the InfraCluster and InfraClusterTemplate CRDs and
# the ClusterRoles of five infrastructure providers, as their release manifests install them
# (`kustomize build` of each provider's own config, from its Go module on the module proxy).
# Needs Go and network access to the Go module proxy; takes a minute or two.
set -euo pipefail
cd "$(dirname "$0")/.."
out=tests/fixtures/contract/providers
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

export GOFLAGS=-mod=mod GOBIN="$work/bin"
go install sigs.k8s.io/kustomize/kustomize/v5@v5.7.1

# name  module@version  kustomization inside the module
providers=(
  "docker   sigs.k8s.io/cluster-api/test@v1.10.10                infrastructure/docker/config/default"
  "aws      sigs.k8s.io/cluster-api-provider-aws/v2@v2.13.0      config/default"
  "azure    sigs.k8s.io/cluster-api-provider-azure@v1.21.0       config/capz"
  "vsphere  sigs.k8s.io/cluster-api-provider-vsphere@v1.12.0     config/default"
  "openstack sigs.k8s.io/cluster-api-provider-openstack@v0.12.1  config/default"
)
for entry in "${providers[@]}"; do
  read -r name module config <<<"$entry"
  dir=$(go mod download -json "$module" | python3 -c 'import json,sys; print(json.load(sys.stdin)["Dir"])')
  # kustomize reads a path with "@" in it as a git URL: build from a copy.
  cp -r "$dir" "$work/$name" && chmod -R u+w "$work/$name"
  "$work/bin/kustomize" build --load-restrictor LoadRestrictionsNone "$work/$name/$config" 2>/dev/null \
    | python3 scripts/contract-fixture.py "$module" "$config" >"$out/$name.yaml"
  echo "$name: $(grep -c '^kind:' "$out/$name.yaml") objects from $module ($config)"
done
