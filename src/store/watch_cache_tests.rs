//! Unit tests of `watch_cache.rs`.

use kube::api::DynamicObject;
use kube::core::ApiResource;
use kube::runtime::watcher::Event;
use serde_json::json;

use super::stream::apply_event;
use super::*;
use crate::managed_fields::TOPOLOGY_MANAGER;

fn cluster(name: &str, class: &str) -> Value {
    json!({
        "apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "Cluster",
        "metadata": {"name": name, "namespace": "ns"},
        "spec": {"topology": {"class": class, "version": "v1.31.0"}}
    })
}

fn names(store: &MemoryStore) -> Vec<String> {
    store
        .names_of_kind(CAPI_GROUP, "Cluster")
        .into_iter()
        .map(|(_, name)| name)
        .collect()
}

/// A store fed Cluster watch events as the cache's stream feeds it.
#[derive(Default)]
struct Fed {
    store: MemoryStore,
    buffer: Vec<Value>,
}

impl Fed {
    fn apply(&mut self, event: Event<Value>) {
        apply_event(&mut self.store, CAPI_GROUP, "Cluster", event, &mut self.buffer);
    }
}

#[test]
fn a_class_read_before_the_cache_is_listed_is_an_entry_unless_it_does_not_decode() {
    let class = json!({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "ClusterClass",
        "metadata": {"name": "quick-start", "namespace": "default"}, "spec": {}});
    let entry = class_entry(&class).expect("a ClusterClass read from the API server");
    assert_eq!(entry.class.metadata.name.as_deref(), Some("quick-start"));
    let broken = json!({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "ClusterClass",
        "metadata": {"name": "broken", "namespace": "default"}, "spec": "not an object"});
    assert!(class_entry(&broken).is_none());
}

#[test]
fn clusters_read_before_the_cache_is_listed_are_matched_to_their_class() {
    let read = [cluster("a", "x"), cluster("b", "y"), cluster("c", "x")].map(Arc::new);
    let mut users: Vec<String> = clusters_using(&read, "ns", "x")
        .iter()
        .filter_map(|c| c.metadata.name.clone())
        .collect();
    users.sort();
    assert_eq!(users, ["a", "c"]);
    assert!(clusters_using(&read, "other", "x").is_empty());
}

#[test]
fn a_relist_replaces_the_kind_and_drops_what_is_gone() {
    let mut fed = Fed::default();
    fed.apply(Event::Apply(cluster("a", "x")));
    fed.apply(Event::Apply(cluster("b", "x")));
    fed.apply(Event::Init);
    fed.apply(Event::InitApply(cluster("b", "y")));
    assert_eq!(
        names(&fed.store),
        ["a", "b"],
        "nothing changes before the list is complete"
    );
    fed.apply(Event::InitApply(cluster("c", "y")));
    fed.apply(Event::InitDone);
    assert_eq!(names(&fed.store), ["b", "c"]);
    assert!(fed.store.clusters_using_class("ns", "x").is_empty());
    assert_eq!(fed.store.clusters_using_class("ns", "y").len(), 2);
}

#[test]
fn deletes_remove_and_undecodable_updates_drop_the_old_version() {
    let mut fed = Fed::default();
    fed.apply(Event::Apply(cluster("a", "x")));
    fed.apply(Event::Apply(cluster("b", "x")));
    fed.apply(Event::Delete(cluster("a", "x")));
    let mut broken = cluster("b", "x");
    broken["spec"]["topology"]["class"] = json!(42);
    fed.apply(Event::Apply(broken));
    assert!(names(&fed.store).is_empty());
}

#[test]
fn a_late_event_never_moves_an_object_back() {
    let mut fed = Fed::default();
    let versioned = |class: &str, rv: &str| {
        let mut object = cluster("a", class);
        object["metadata"]["resourceVersion"] = json!(rv);
        object
    };
    let class_of = |store: &MemoryStore| store.clusters_in("ns")[0].spec.topology.class_ref.name.clone();
    // This process wrote version 10 and kept it; the stream then delivers version 9.
    fed.apply(Event::Apply(versioned("written", "10")));
    fed.apply(Event::Apply(versioned("older", "9")));
    assert_eq!(class_of(&fed.store), "written");
    fed.apply(Event::Apply(versioned("newer", "11")));
    assert_eq!(class_of(&fed.store), "newer");
    fed.apply(Event::Init);
    fed.apply(Event::InitApply(versioned("relisted", "9")));
    fed.apply(Event::InitDone);
    assert_eq!(class_of(&fed.store), "newer", "nor does a relist behind it");
}

#[test]
fn resource_versions_compare_as_numbers() {
    let versioned = |rv: &str| {
        let mut object = cluster("a", "x");
        object["metadata"]["resourceVersion"] = json!(rv);
        object
    };
    assert!(resource_version(&versioned("100")) > resource_version(&versioned("99")));
    assert_eq!(
        resource_version(&cluster("b", "x")),
        0,
        "no version is the oldest"
    );
}

#[test]
fn objects_keep_their_type_and_lose_managed_fields() {
    let resource = ApiResource {
        group: CAPI_GROUP.to_owned(),
        version: CAPI_VERSION.to_owned(),
        api_version: "cluster.x-k8s.io/v1beta2".to_owned(),
        kind: "Cluster".to_owned(),
        plural: "clusters".to_owned(),
    };
    let object: DynamicObject = serde_json::from_value(json!({
        "metadata": {"name": "a", "managedFields": [{"manager": "kubectl"}],
            "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{}"}},
        "spec": {"paused": true}
    }))
    .unwrap();
    let value = object_value(&object, &resource);
    assert_eq!(value["kind"], "Cluster");
    assert_eq!(value["apiVersion"], "cluster.x-k8s.io/v1beta2");
    assert_eq!(value["spec"]["paused"], true);
    assert!(value["metadata"].get("managedFields").is_none());
    assert_eq!(value["metadata"]["annotations"], json!({}));
    let ours = json!({"manager": TOPOLOGY_MANAGER, "operation": "Apply", "fieldsType": "FieldsV1",
            "fieldsV1": {"f:spec": {"f:paused": {}}}});
    let object: DynamicObject = serde_json::from_value(json!({
            "metadata": {"name": "a", "managedFields": [ours,
                {"manager": "kubectl", "operation": "Update", "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:x": {}}}}]},
            "spec": {"paused": true}
        }))
        .unwrap();
    let value = object_value(&object, &resource);
    let kept = &value["metadata"]["managedFields"];
    assert_eq!(kept[0], ours, "the topology's apply reads it");
    assert_eq!(
        kept[1]["fieldsV1"],
        json!({"f:spec": {}}),
        "others' fields among ours"
    );
}
