//! Building the desired objects from patched templates.

pub mod control_plane;
pub mod health_checks;
pub mod machine_deployments;
pub mod machine_pools;
pub mod worker_object;

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use crate::api::labels::{
    CLUSTER_NAME_LABEL, TEMPLATE_CLONED_FROM_GROUP_KIND_ANNOTATION, TEMPLATE_CLONED_FROM_NAME_ANNOTATION,
    TOPOLOGY_DEFER_UPGRADE_ANNOTATION, TOPOLOGY_HOLD_UPGRADE_SEQUENCE_ANNOTATION, TOPOLOGY_OWNED_LABEL,
};
use crate::api::{MachineDeletionSpec, TopologyMetadata};
use crate::patches::pointer_ops::{field, member_mut};
use crate::store::group_of;

/// The apiVersion of the Cluster API objects the engine generates (MachineDeployment,
/// MachinePool, MachineHealthCheck): the v1beta2 hub.
pub const CAPI_API_VERSION: &str = "cluster.x-k8s.io/v1beta2";

/// Labels every generated object carries: the Cluster's name and the topology-owned marker.
pub fn owned_labels(cluster: &str) -> BTreeMap<String, String> {
    BTreeMap::from([
        (CLUSTER_NAME_LABEL.to_owned(), cluster.to_owned()),
        (TOPOLOGY_OWNED_LABEL.to_owned(), String::new()),
    ])
}

/// Labels and annotations of `layers` merged in order (later wins), then `labels` on top.
pub fn merged_metadata(
    layers: &[&TopologyMetadata],
    labels: BTreeMap<String, String>,
) -> (Map<String, Value>, Map<String, Value>) {
    let mut out_labels = Map::new();
    let mut out_annotations = Map::new();
    for layer in layers {
        for (k, v) in &layer.labels {
            out_labels.insert(k.clone(), Value::String(v.clone()));
        }
        for (k, v) in &layer.annotations {
            out_annotations.insert(k.clone(), Value::String(v.clone()));
        }
    }
    for (k, v) in labels {
        out_labels.insert(k, Value::String(v));
    }
    (out_labels, out_annotations)
}

/// An object's labels and annotations as the `metadata` of a builtin variable
/// (`builtin.controlPlane.metadata`): each map only when it has entries.
pub fn metadata_builtin(labels: Map<String, Value>, annotations: Map<String, Value>) -> Value {
    let mut metadata = Map::new();
    if !labels.is_empty() {
        metadata.insert("labels".to_owned(), Value::Object(labels));
    }
    if !annotations.is_empty() {
        metadata.insert("annotations".to_owned(), Value::Object(annotations));
    }
    Value::Object(metadata)
}

/// A worker's annotations without the upgrade-sequencing ones, which only the topology reads.
pub fn worker_annotations(mut annotations: Map<String, Value>) -> Map<String, Value> {
    annotations.remove(TOPOLOGY_DEFER_UPGRADE_ANNOTATION);
    annotations.remove(TOPOLOGY_HOLD_UPGRADE_SEQUENCE_ANNOTATION);
    annotations
}

/// The annotation `kubectl apply` leaves, never copied to a clone nor shown to patches.
pub const LAST_APPLIED_ANNOTATION: &str = "kubectl.kubernetes.io/last-applied-configuration";

/// The clone of a template as stored: same apiVersion and kind (`instantiate` false) or the kind
/// without `Template` and the template's `spec.template.spec` (true). Its labels and annotations
/// are the template's own (`metadata`, or `spec.template.metadata` when instantiating) with the
/// Cluster's labels and the `cloned-from` annotations on top, as Cluster API clones templates.
pub fn clone_template(
    mut template: Value,
    name: &str,
    namespace: &str,
    cluster: &str,
    instantiate: bool,
) -> Value {
    // The template is owned: its spec and metadata maps are moved into the clone, not copied
    // (members found without hashing their keys: templates' objects are small).
    let holder = if instantiate {
        member_of(&mut template, "spec").and_then(|spec| member_of(spec, "template"))
    } else {
        Some(&mut template)
    };
    let (spec, mut labels, mut annotations) = match holder {
        Some(holder) => {
            let spec = member_of(holder, "spec").map_or(Value::Null, Value::take);
            let mut metadata = member_of(holder, "metadata");
            let mut take_map = |key| match metadata
                .as_deref_mut()
                .and_then(|m| member_of(m, key))
                .map(Value::take)
            {
                Some(Value::Object(map)) => map,
                _ => Map::new(),
            };
            (spec, take_map("labels"), take_map("annotations"))
        }
        None => (Value::Null, Map::new(), Map::new()),
    };
    annotations.remove(LAST_APPLIED_ANNOTATION);
    // The labels of `owned_labels`, in its order, without building its map.
    labels.insert(CLUSTER_NAME_LABEL.to_owned(), Value::String(cluster.to_owned()));
    labels.insert(TOPOLOGY_OWNED_LABEL.to_owned(), Value::String(String::new()));
    annotations.extend(cloned_from(&template));
    let kind = text(&template, "kind");
    let out_kind = if instantiate {
        kind.strip_suffix("Template").unwrap_or(kind)
    } else {
        kind
    };
    let out_kind = Value::String(out_kind.to_owned());
    let metadata = object_of([
        ("name", Value::String(name.to_owned())),
        ("namespace", Value::String(namespace.to_owned())),
        ("labels", Value::Object(labels)),
        ("annotations", Value::Object(annotations)),
    ]);
    let api_version = text(&template, "apiVersion").to_owned();
    let mut object = object_of([
        ("apiVersion", Value::String(api_version)),
        ("kind", out_kind),
        ("metadata", metadata),
    ]);
    if !spec.is_null() {
        object["spec"] = spec;
    }
    object
}

/// The member `key` of `value` when it is an object that has one.
fn member_of<'v>(value: &'v mut Value, key: &str) -> Option<&'v mut Value> {
    value.as_object_mut().and_then(|map| member_mut(map, key))
}

/// The string at `key` of `object`, empty when absent or not a string.
fn text<'v>(object: &'v Value, key: &str) -> &'v str {
    field(object, key).and_then(Value::as_str).unwrap_or_default()
}

/// The member `key` of `object`'s metadata, or null.
fn metadata_member(object: &Value, key: &str) -> Value {
    field(object, "metadata")
        .and_then(|metadata| field(metadata, key))
        .cloned()
        .unwrap_or(Value::Null)
}

/// The `cloned-from` annotations of an object made from `template`: its group and kind, its name.
pub fn cloned_from(template: &Value) -> [(String, Value); 2] {
    let api_version = text(template, "apiVersion");
    let kind = text(template, "kind");
    let group = group_of(api_version);
    let group_kind = if group.is_empty() {
        kind.to_owned()
    } else {
        format!("{kind}.{group}")
    };
    [
        (
            TEMPLATE_CLONED_FROM_GROUP_KIND_ANNOTATION.to_owned(),
            Value::String(group_kind),
        ),
        (
            TEMPLATE_CLONED_FROM_NAME_ANNOTATION.to_owned(),
            metadata_member(template, "name"),
        ),
    ]
}

/// A v1beta2 contract-versioned reference (`apiGroup`, `kind`, `name`) to `object`, as Cluster
/// API v1.14 writes the Cluster's, Machines' and workers' references.
pub fn contract_ref_to(object: &Value) -> Value {
    let group = group_of(text(object, "apiVersion"));
    object_of([
        ("apiGroup", Value::String(group.to_owned())),
        ("kind", field(object, "kind").cloned().unwrap_or(Value::Null)),
        ("name", metadata_member(object, "name")),
    ])
}

/// A v1beta1 object reference (`apiVersion`, `kind`, `name`, `namespace`) to `object`, as a
/// v1beta1-contract control plane's `machineTemplate.infrastructureRef` holds it.
pub fn reference_to(object: &Value) -> Value {
    let metadata = &object["metadata"];
    object_of([
        ("apiVersion", object["apiVersion"].clone()),
        ("kind", object["kind"].clone()),
        ("name", metadata["name"].clone()),
        ("namespace", metadata["namespace"].clone()),
    ])
}

/// A JSON object of `entries`, in order. Unlike `json!`, values are moved in, not re-serialized.
pub fn object_of<const N: usize>(entries: [(&str, Value); N]) -> Value {
    Value::Object(entries.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())
}

/// The node drain, volume detach and deletion timeouts in force: each the topology's, else the
/// class's (the deletion order is not a machine's and is left out).
pub fn node_timeouts(topology: &MachineDeletionSpec, class: &MachineDeletionSpec) -> MachineDeletionSpec {
    MachineDeletionSpec {
        order: None,
        node_drain_timeout_seconds: topology
            .node_drain_timeout_seconds
            .or(class.node_drain_timeout_seconds),
        node_volume_detach_timeout_seconds: topology
            .node_volume_detach_timeout_seconds
            .or(class.node_volume_detach_timeout_seconds),
        node_deletion_timeout_seconds: topology
            .node_deletion_timeout_seconds
            .or(class.node_deletion_timeout_seconds),
    }
}

/// Sets a v1beta2 machine spec's `deletion` (`node*TimeoutSeconds`), when some timeout is set.
pub fn set_deletion(machine: &mut Value, timeouts: &MachineDeletionSpec) {
    set_opt(
        machine,
        "deletion",
        serde_json::to_value(timeouts).unwrap_or(Value::Null),
    );
}

/// Sets `key` to `list` on a JSON object when the list has entries.
pub fn set_list<T: serde::Serialize>(object: &mut Value, key: &str, list: &[T]) {
    if !list.is_empty() {
        set_opt(object, key, serde_json::to_value(list).unwrap_or(Value::Null));
    }
}

/// Sets `key` on a JSON object when `value` is not null nor an empty object.
pub fn set_opt(object: &mut Value, key: &str, value: Value) {
    let empty = value.as_object().is_some_and(Map::is_empty);
    if let (false, false, Some(map)) = (value.is_null(), empty, object.as_object_mut()) {
        map.insert(key.to_owned(), value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn instantiated_templates_drop_the_suffix_and_keep_only_the_inner_spec() {
        let template = json!({"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1", "kind": "DockerClusterTemplate",
            "metadata": {"name": "t"}, "spec": {"template": {"spec": {"a": 1}}}});
        let object = clone_template(template, "c-x", "ns", "c", true);
        assert_eq!(
            object,
            json!({"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1", "kind": "DockerCluster",
            "metadata": {"name": "c-x", "namespace": "ns",
                "labels": {"cluster.x-k8s.io/cluster-name": "c", "topology.cluster.x-k8s.io/owned": ""},
                "annotations": {"cluster.x-k8s.io/cloned-from-groupkind": "DockerClusterTemplate.infrastructure.cluster.x-k8s.io",
                    "cluster.x-k8s.io/cloned-from-name": "t"}},
            "spec": {"a": 1}})
        );
    }

    #[test]
    fn clones_keep_the_templates_own_metadata_under_the_clusters() {
        let template = json!({"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1", "kind": "DockerMachineTemplate",
            "metadata": {"name": "t", "labels": {"team": "a", CLUSTER_NAME_LABEL: "other"},
                "annotations": {"note": "x", LAST_APPLIED_ANNOTATION: "{}"}},
            "spec": {"template": {"metadata": {"labels": {"inner": "y"}}, "spec": {}}}});
        let clone = clone_template(template.clone(), "c-x", "ns", "c", false);
        let metadata = &clone["metadata"];
        assert_eq!(metadata["labels"]["team"], "a");
        assert_eq!(metadata["labels"][CLUSTER_NAME_LABEL], "c");
        assert_eq!(metadata["annotations"]["note"], "x");
        assert_eq!(metadata["annotations"].get(LAST_APPLIED_ANNOTATION), None);
        assert_eq!(clone["spec"]["template"]["metadata"]["labels"]["inner"], "y");
        let object = clone_template(template, "c-y", "ns", "c", true);
        assert_eq!(object["metadata"]["labels"]["inner"], "y");
        assert_eq!(object["metadata"]["labels"].get("team"), None);
        let core = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "m"}});
        assert_eq!(cloned_from(&core)[0].1, "ConfigMap");
    }
}
