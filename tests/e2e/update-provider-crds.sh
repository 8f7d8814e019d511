#!/usr/bin/env bash
# Regenerates tests/e2e/crds/ from Cluster API's own provider CRDs at a tag (default v1.14.0):
# the Docker infrastructure provider's (test/infrastructure/docker) and the kubeadm control plane
# and bootstrap providers'. Each CRD is Cluster API's `config/crd/bases` file with what the
# provider's kustomization adds at release time, except the conversion webhook:
#   - the contract labels (`cluster.x-k8s.io/v1beta1: v1beta1`, `cluster.x-k8s.io/v1beta2: v1beta2`),
#   - `spec.conversion.strategy: None` instead of a Webhook at Cluster API's webhook-service, which
#     the e2e suite does not run: v1beta1 and v1beta2 stay served, v1beta2 is the storage version,
#     and the API server only relabels apiVersion between them (see tests/e2e/crds/README.md).
#   usage: tests/e2e/update-provider-crds.sh [GIT_DIR_OF_CLUSTER_API [TAG]]
set -euo pipefail

REPO="${1:-/work/.mirror/kubernetes-sigs+cluster-api/repo}"
TAG="${2:-v1.14.0}"
OUT="$(cd "$(dirname "$0")" && pwd)/crds"
CRDS=(
  test/infrastructure/docker/config/crd/bases/infrastructure.cluster.x-k8s.io_dockerclusters.yaml
  test/infrastructure/docker/config/crd/bases/infrastructure.cluster.x-k8s.io_dockerclustertemplates.yaml
  test/infrastructure/docker/config/crd/bases/infrastructure.cluster.x-k8s.io_dockermachinetemplates.yaml
  controlplane/kubeadm/config/crd/bases/controlplane.cluster.x-k8s.io_kubeadmcontrolplanes.yaml
  controlplane/kubeadm/config/crd/bases/controlplane.cluster.x-k8s.io_kubeadmcontrolplanetemplates.yaml
  bootstrap/kubeadm/config/crd/bases/bootstrap.cluster.x-k8s.io_kubeadmconfigtemplates.yaml
)

mkdir -p "$OUT"
for path in "${CRDS[@]}"; do
  file="$OUT/$(basename "$path")"
  {
    printf '# Cluster API %s %s, for the e2e suite: contract labels added, conversion strategy None\n' "$TAG" "$path"
    printf '# (no Cluster API conversion webhook runs here). Regenerate with tests/e2e/update-provider-crds.sh.\n'
    git --git-dir="$REPO" show "$TAG:$path" | python3 -c '
import sys
text = sys.stdin.read()
if "\n  conversion:" in text or "\n  labels:" in text.split("\nspec:\n", 1)[0]:
    sys.exit("unexpected conversion or labels in the bases file")
head, spec = text.split("\nspec:\n", 1)
labels = "  labels:\n    cluster.x-k8s.io/v1beta1: v1beta1\n    cluster.x-k8s.io/v1beta2: v1beta2\n"
# metadata ends with "  name: ..."; labels go after it, still inside metadata.
sys.stdout.write(head + "\n" + labels + "spec:\n  conversion:\n    strategy: None\n" + spec)
'
  } > "$file"
  printf '%8d %s\n' "$(wc -c < "$file")" "$(basename "$file")"
done
