//! Unit tests of `memory.rs`.

use super::*;
use crate::api::labels::CLUSTER_NAME_LABEL;

const OBJECTS: &str = r#"
apiVersion: cluster.x-k8s.io/v1beta1
kind: ClusterClass
metadata: {name: quick, namespace: infra}
---
apiVersion: cluster.x-k8s.io/v1beta1
kind: Cluster
metadata: {name: c1, namespace: team-a}
spec: {topology: {class: quick, classNamespace: infra, version: v1.31.0}}
---
apiVersion: cluster.x-k8s.io/v1beta1
kind: Cluster
metadata: {name: c2, namespace: infra}
spec: {topology: {class: quick, version: v1.31.0}}
---
apiVersion: cluster.x-k8s.io/v1beta1
kind: Cluster
metadata: {name: c3}
spec: {topology: {class: quick, version: v1.31.0}}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: cm}
"#;

fn names(clusters: &[Arc<Cluster>]) -> Vec<String> {
    clusters
        .iter()
        .map(|c| {
            format!(
                "{}/{}",
                c.metadata.namespace.as_deref().unwrap_or(""),
                c.metadata.name.as_deref().unwrap_or("")
            )
        })
        .collect()
}

#[test]
fn indexes_clusters_by_class_across_namespaces() {
    let store = MemoryStore::from_yaml(OBJECTS).unwrap();
    assert_eq!(
        names(&store.clusters_using_class("infra", "quick")),
        ["infra/c2", "team-a/c1"]
    );
    assert_eq!(
        names(&store.clusters_using_class("default", "quick")),
        ["default/c3"]
    );
    assert!(store.cluster_class("infra", "quick").is_some());
    assert!(store.cluster_class("default", "quick").is_none());
    assert!(store.get("", "ConfigMap", "default", "cm").is_some());
    assert_eq!(store.list("cluster.x-k8s.io", "Cluster", "infra").len(), 1);
}

#[test]
fn replacing_a_cluster_moves_it_between_classes() {
    let mut store = MemoryStore::from_yaml(OBJECTS).unwrap();
    let moved = serde_json::json!({
        "apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "Cluster",
        "metadata": {"name": "c1", "namespace": "team-a"},
        "spec": {"topology": {"class": "other", "version": "v1.31.0"}}
    });
    store.insert(moved).unwrap();
    assert_eq!(names(&store.clusters_using_class("infra", "quick")), ["infra/c2"]);
    assert_eq!(
        names(&store.clusters_using_class("team-a", "other")),
        ["team-a/c1"]
    );
    assert!(store.remove("cluster.x-k8s.io", "Cluster", "team-a", "c1"));
    assert!(store.clusters_using_class("team-a", "other").is_empty());
}

fn labelled(kind: &str, name: &str, cluster: Option<&str>) -> Value {
    let mut object = serde_json::json!({
        "apiVersion": "infrastructure.cluster.x-k8s.io/v1beta2", "kind": kind,
        "metadata": {"name": name, "namespace": "ns"}
    });
    if let Some(cluster) = cluster {
        object["metadata"]["labels"] = serde_json::json!({CLUSTER_NAME_LABEL: cluster});
    }
    object
}

fn names_of(objects: &[Arc<Value>]) -> Vec<&str> {
    objects
        .iter()
        .map(|o| o["metadata"]["name"].as_str().unwrap_or_default())
        .collect()
}

#[test]
fn objects_are_indexed_by_the_cluster_they_are_labelled_for() {
    let group = "infrastructure.cluster.x-k8s.io";
    let mut store = MemoryStore::default();
    for (name, cluster) in [
        ("a-1", Some("a")),
        ("b-1", Some("b")),
        ("a-2", Some("a")),
        ("x", None),
    ] {
        store
            .insert(labelled("DockerMachineTemplate", name, cluster))
            .unwrap();
    }
    store.insert(labelled("DockerCluster", "a", Some("a"))).unwrap();
    let of =
        |store: &MemoryStore, cluster| store.list_of_cluster(group, "DockerMachineTemplate", "ns", cluster);
    assert_eq!(names_of(&of(&store, "a")), ["a-1", "a-2"]);
    assert_eq!(names_of(&of(&store, "b")), ["b-1"]);
    assert!(store
        .list_of_cluster(group, "DockerMachineTemplate", "other", "a")
        .is_empty());
    // Relabelled and removed objects leave the index.
    store
        .insert(labelled("DockerMachineTemplate", "a-2", Some("b")))
        .unwrap();
    assert!(store.remove(group, "DockerMachineTemplate", "ns", "a-1"));
    assert!(of(&store, "a").is_empty());
    assert_eq!(names_of(&of(&store, "b")), ["a-2", "b-1"]);
    // The index answers as filtering the namespace's list by the label does.
    let filtered = super::super::of_cluster(store.list(group, "DockerMachineTemplate", "ns"), "b");
    assert_eq!(names_of(&filtered), names_of(&of(&store, "b")));
}

#[test]
fn counts_per_kind_follow_inserts_replacements_and_removals() {
    let group = "infrastructure.cluster.x-k8s.io";
    let mut store = MemoryStore::default();
    store.insert(labelled("DockerCluster", "a", None)).unwrap();
    store.insert(labelled("DockerCluster", "a", Some("a"))).unwrap();
    store.insert(labelled("DockerCluster", "b", None)).unwrap();
    store
        .insert(labelled("DockerMachineTemplate", "a", None))
        .unwrap();
    assert_eq!(store.count_of_kind(group, "DockerCluster"), 2);
    assert!(store.remove(group, "DockerCluster", "ns", "a"));
    assert!(!store.remove(group, "DockerCluster", "ns", "a"));
    assert_eq!(store.count_of_kind(group, "DockerCluster"), 1);
    assert_eq!(store.count_of_kind(group, "DockerMachineTemplate"), 1);
    assert_eq!(store.count_of_kind(group, "Other"), 0);
    assert_eq!(
        store.count_of_kind(group, "DockerCluster"),
        store.names_of_kind(group, "DockerCluster").len()
    );
}

#[test]
fn rejects_undecodable_capi_objects_with_the_field_path() {
    let err = MemoryStore::from_yaml(
            "apiVersion: cluster.x-k8s.io/v1beta1\nkind: Cluster\nmetadata: {name: bad}\nspec: {topology: {class: 3}}\n",
        )
        .unwrap_err();
    assert!(
        err.to_string()
            .starts_with("Cluster default/bad: spec.topology.classRef.name: invalid type"),
        "{err}"
    );
}

#[test]
fn our_kinds_are_stored_at_the_hub_and_unknown_versions_are_refused() {
    let store = MemoryStore::from_yaml(OBJECTS).unwrap();
    let c1 = store.get("cluster.x-k8s.io", "Cluster", "team-a", "c1").unwrap();
    assert_eq!(c1["apiVersion"], "cluster.x-k8s.io/v1beta2");
    assert_eq!(c1["spec"]["topology"]["classRef"]["name"], "quick");
    let err = MemoryStore::from_yaml(
        "apiVersion: cluster.x-k8s.io/v1alpha3\nkind: Cluster\nmetadata: {name: old}\n",
    )
    .unwrap_err();
    assert!(err.to_string().contains("cluster.x-k8s.io/v1alpha3"), "{err}");
    assert!(err.to_string().contains("Cluster default/old"), "{err}");
}

#[test]
fn contract_versions_come_from_the_crds_held() {
    let store = MemoryStore::from_yaml(
        "apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: kubeadmcontrolplanes.controlplane.cluster.x-k8s.io
  labels: {cluster.x-k8s.io/v1beta1: v1beta1, cluster.x-k8s.io/v1beta2: v1beta2}
spec: {group: controlplane.cluster.x-k8s.io, names: {kind: KubeadmControlPlane}}
",
    )
    .unwrap();
    let group = "controlplane.cluster.x-k8s.io";
    assert_eq!(
        store.version_of(group, "KubeadmControlPlane").as_deref(),
        Some("v1beta2")
    );
    assert_eq!(
        store
            .contract_of(group, "KubeadmControlPlane", "v1beta1")
            .as_deref(),
        Some("v1beta1")
    );
    assert_eq!(store.version_of(group, "Other"), None);
}
