"""Writes src/api/crd_constraints/v1.14.yaml, the table our CRDs take their schema constraints
from: every constraint of Cluster API v1.14.0's CRDs (core/config/crd/bases), per kind, served
version and field path, for the kinds capi-topology generates. Usage:
    python3 scripts/crd-constraints.py DIR > src/api/crd_constraints/v1.14.yaml
where DIR holds the CRD files (`git show v1.14.0:core/config/crd/bases/NAME.yaml` of a Cluster API
clone). Data only: paths, numbers, patterns, enums and CEL rules with their messages."""
import os
import sys

import yaml

FILES = [
    "cluster.x-k8s.io_clusters",
    "cluster.x-k8s.io_clusterclasses",
    "cluster.x-k8s.io_machinedeployments",
    "cluster.x-k8s.io_machinesets",
    "cluster.x-k8s.io_machines",
    "cluster.x-k8s.io_machinehealthchecks",
    "cluster.x-k8s.io_machinepools",
    "addons.cluster.x-k8s.io_clusterresourcesets",
    "addons.cluster.x-k8s.io_clusterresourcesetbindings",
    "runtime.cluster.x-k8s.io_extensionconfigs",
]
# The constraints the API server enforces on a value (or keeps, prunes or defaults by).
KEYS = [
    "required", "minLength", "maxLength", "minItems", "maxItems", "pattern", "minimum",
    "maximum", "exclusiveMinimum", "exclusiveMaximum", "minProperties", "maxProperties",
    "enum", "format", "x-kubernetes-validations", "nullable",
    "x-kubernetes-preserve-unknown-fields", "default", "uniqueItems",
]


def walk(node, path, out):
    """Records the constraints of `node` at `path`, then of its children."""
    found = {key: node[key] for key in KEYS if key in node}
    if "required" in found:
        found["required"] = sorted(found["required"])
    if found:
        out[path or "."] = found
    if node.get("x-kubernetes-preserve-unknown-fields"):
        return
    for name, child in sorted(node.get("properties", {}).items()):
        if path == "" and name == "metadata":
            continue
        walk(child, f"{path}.{name}", out)
    if isinstance(node.get("items"), dict):
        walk(node["items"], f"{path}[]", out)
    if isinstance(node.get("additionalProperties"), dict):
        walk(node["additionalProperties"], f"{path}{{}}", out)


def main():
    directory = sys.argv[1]
    constraints = {}
    for name in FILES:
        with open(os.path.join(directory, name + ".yaml")) as f:
            crd = yaml.safe_load(f)
        kind = crd["spec"]["names"]["kind"]
        for version in crd["spec"]["versions"]:
            out = {}
            walk(version["schema"]["openAPIV3Schema"], "", out)
            constraints[f"{kind}/{version['name']}"] = out
    print("# Every schema constraint of Cluster API v1.14.0's CRDs (core/config/crd/bases), per kind,")
    print("# served version and field path (`.` steps into a property, `[]` into list items, `{}` into")
    print("# map values; `.` alone is the object). Made by scripts/crd-constraints.py; src/api/crd.rs")
    print("# lays them onto the schemas generated from our types, and tests/crd_constraints.rs checks")
    print("# that manifests/crds carries exactly these (less the reasoned exceptions beside this file).")
    print(yaml.safe_dump({"constraints": constraints}, sort_keys=False, width=100000), end="")


main()
