"""Keeps, of a provider's built manifests (stdin), what `capi-topology contract` reads: the CRDs
of infrastructure kinds ending in Cluster or ClusterTemplate, and every ClusterRole."""
import sys

import yaml

module, config = sys.argv[1], sys.argv[2]
kept = []
for doc in yaml.safe_load_all(sys.stdin):
    if not doc:
        continue
    if doc.get("kind") == "CustomResourceDefinition":
        kind = doc["spec"]["names"]["kind"]
        if doc["spec"]["group"].startswith("infrastructure.") and kind.endswith(("Cluster", "ClusterTemplate")):
            kept.append(doc)
    elif doc.get("kind") == "ClusterRole":
        kept.append(doc)
print(f"# From {module}, `kustomize build {config}` (Apache-2.0); refreshed by scripts/fetch-provider-crds.sh.")
print(yaml.safe_dump_all(kept, sort_keys=False, width=1000), end="")
