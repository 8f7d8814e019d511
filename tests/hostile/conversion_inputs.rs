//! ConversionReviews for the hostile catalogue, built rather than stored: a hub Cluster whose
//! spec holds hundreds of thousands of empty arrays (what once took `/convert` past 1 GB), and
//! a list of many small Clusters (what a `kubectl get clusters.v1beta1...` of a large fleet
//! sends: legitimate, and it must fit).

use serde_json::{json, Value};

/// The version the hostile reviews ask for: hub to spoke, the direction that writes the most.
pub const TO_V1BETA1: &str = "cluster.x-k8s.io/v1beta1";

/// A ConversionReview of about `bytes` to v1beta1: one hub Cluster whose `spec.x` holds empty
/// arrays, three bytes each.
pub fn empty_arrays(bytes: usize) -> Vec<u8> {
    let mut body = format!(
        r#"{{"apiVersion":"apiextensions.k8s.io/v1","kind":"ConversionReview","request":{{"uid":"u-arrays","desiredAPIVersion":"{TO_V1BETA1}","objects":[{{"apiVersion":"cluster.x-k8s.io/v1beta2","kind":"Cluster","metadata":{{"name":"c","namespace":"default"}},"spec":{{"x":["#
    )
    .into_bytes();
    let arrays = bytes.saturating_sub(body.len()) / 3;
    for _ in 0..arrays {
        body.extend_from_slice(b"[],");
    }
    body.extend_from_slice(b"[]]}}]}}");
    body
}

/// One small hub Cluster, some 340 bytes of JSON.
fn small_cluster(index: usize) -> Value {
    json!({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster",
        "metadata": {"name": format!("cluster-{index:05}"), "namespace": "fleet",
            "uid": format!("0b7e6a4c-1f7e-4a51-9d0e-{index:012}"), "resourceVersion": format!("{}", 100_000 + index),
            "labels": {"env": "dev"}},
        "spec": {"topology": {"classRef": {"name": "quick-start"}, "version": "v1.31.0",
            "controlPlane": {"replicas": 3},
            "workers": {"machineDeployments": [{"class": "default-worker", "name": "md-0", "replicas": 2}]}}}})
}

/// A ConversionReview of `count` small hub Clusters to v1beta1 (10,000: about 3.4 MB).
pub fn small_clusters(count: usize) -> Vec<u8> {
    let objects: Vec<Value> = (0..count).map(small_cluster).collect();
    let review = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
        "request": {"uid": "u-fleet", "desiredAPIVersion": TO_V1BETA1, "objects": objects}});
    serde_json::to_vec(&review).expect("encodes")
}
