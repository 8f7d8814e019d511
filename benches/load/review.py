#!/usr/bin/env python3
"""Writes the AdmissionReview the load benchmark posts: a CREATE of the quickstart's dev Cluster
under a new name (what `kubectl apply` of a new Cluster sends to the mutating webhook), at the
version the manifest is written in (the webhook path must name the same version)."""
import json
import sys

import yaml  # PyYAML (Debian python3-yaml)

cluster = yaml.safe_load(open(sys.argv[1]))
cluster["metadata"]["name"] = "load-test"
namespace = cluster["metadata"].get("namespace", "default")
version = cluster["apiVersion"].split("/")[1]
review = {
    "apiVersion": "admission.k8s.io/v1",
    "kind": "AdmissionReview",
    "request": {
        "uid": "5f0c6c3e-0000-4000-8000-000000000001",
        "kind": {"group": "cluster.x-k8s.io", "version": version, "kind": "Cluster"},
        "resource": {"group": "cluster.x-k8s.io", "version": version, "resource": "clusters"},
        "namespace": namespace,
        "name": "load-test",
        "operation": "CREATE",
        "userInfo": {"username": "load"},
        "object": cluster,
        "dryRun": False,
    },
}
json.dump(review, sys.stdout)
