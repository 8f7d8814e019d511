//! The desired control plane object.

use serde_json::{json, Map, Value};

use super::{
    clone_template, cloned_from, merged_metadata, owned_labels, reference_to, set_node_timeouts, set_opt,
};
use crate::api::{ControlPlaneClass, ControlPlaneTopology};

/// What the control plane is built from.
#[derive(Debug, Clone, Copy)]
pub struct ControlPlaneInput<'a> {
    /// The patched control plane template.
    pub template: &'a Value,
    /// The class's control plane template before patching: patches change only specs, and the
    /// `machineTemplate.metadata` it sets is kept over theirs, as Cluster API preserves it.
    pub unpatched: &'a Value,
    /// The control plane's name.
    pub name: &'a str,
    /// The Cluster's namespace.
    pub namespace: &'a str,
    /// The Cluster's name.
    pub cluster: &'a str,
    /// The version to run.
    pub version: &'a str,
    /// The topology's `rolloutAfter`, when set.
    pub rollout_after: Option<&'a str>,
    /// The class's control plane.
    pub class: &'a ControlPlaneClass,
    /// The topology's control plane.
    pub topology: &'a ControlPlaneTopology,
    /// The cloned infrastructure machine template, when the class has one.
    pub machine_infrastructure: Option<&'a Value>,
}

/// Labels and annotations of the class's and the topology's control plane metadata (the topology
/// wins), with the Cluster's labels on top: what the control plane's machines carry.
fn machine_metadata(
    class: &ControlPlaneClass,
    topology: &ControlPlaneTopology,
    cluster: &str,
) -> (Map<String, Value>, Map<String, Value>) {
    merged_metadata(&[&class.metadata, &topology.metadata], owned_labels(cluster))
}

/// The control plane object's labels and annotations, as `builtin.controlPlane.metadata` gives
/// them: the (unpatched) template's `spec.template.metadata`, then the class's and topology's
/// metadata (the topology wins) with the Cluster's labels, then the `cloned-from` annotations.
pub fn object_metadata(
    unpatched: &Value,
    class: &ControlPlaneClass,
    topology: &ControlPlaneTopology,
    cluster: &str,
) -> (Map<String, Value>, Map<String, Value>) {
    let template_metadata = &unpatched["spec"]["template"]["metadata"];
    let map_of = |value: &Value| value.as_object().cloned().unwrap_or_default();
    let (mut labels, mut annotations) = (
        map_of(&template_metadata["labels"]),
        map_of(&template_metadata["annotations"]),
    );
    let (own_labels, own_annotations) = machine_metadata(class, topology, cluster);
    labels.extend(own_labels);
    annotations.extend(own_annotations);
    annotations.extend(cloned_from(unpatched));
    (labels, annotations)
}

/// `base` with `over`'s entries on top (`over` wins).
fn overlay(base: &Value, over: &Map<String, Value>) -> Map<String, Value> {
    let mut out = base.as_object().cloned().unwrap_or_default();
    out.extend(over.iter().map(|(k, v)| (k.clone(), v.clone())));
    out
}

/// The control plane: the template's spec, then the fields the topology owns set over whatever the
/// patches wrote (version, rolloutAfter, replicas, machineTemplate metadata, infrastructureRef,
/// readiness gates, timeouts). With an infrastructure machine template, the machines' metadata is
/// the unpatched template's `machineTemplate.metadata` with the control plane's on top.
pub fn desired(input: &ControlPlaneInput<'_>) -> Value {
    let mut object = clone_template(
        input.template.clone(),
        input.name,
        input.namespace,
        input.cluster,
        true,
    );
    let (object_labels, object_annotations) =
        object_metadata(input.unpatched, input.class, input.topology, input.cluster);
    object["metadata"]["labels"] = Value::Object(object_labels);
    object["metadata"]["annotations"] = Value::Object(object_annotations);
    if !object["spec"].is_object() {
        object["spec"] = json!({});
    }
    let spec = &mut object["spec"];
    spec["version"] = json!(input.version);
    set_opt(spec, "rolloutAfter", json!(input.rollout_after));
    set_opt(spec, "replicas", json!(input.topology.replicas));
    if input.machine_infrastructure.is_some() || spec.get("machineTemplate").is_some() {
        let mut machine = spec.get("machineTemplate").cloned().unwrap_or_else(|| json!({}));
        if let Some(infra) = input.machine_infrastructure {
            let (labels, annotations) = machine_metadata(input.class, input.topology, input.cluster);
            let kept = &input.unpatched["spec"]["template"]["spec"]["machineTemplate"]["metadata"];
            machine["metadata"] = json!({"labels": overlay(&kept["labels"], &labels)});
            set_opt(
                &mut machine["metadata"],
                "annotations",
                Value::Object(overlay(&kept["annotations"], &annotations)),
            );
            machine["infrastructureRef"] = reference_to(infra);
        }
        let gates = if input.topology.readiness_gates.is_empty() {
            &input.class.readiness_gates
        } else {
            &input.topology.readiness_gates
        };
        if !gates.is_empty() {
            machine["readinessGates"] = serde_json::to_value(gates).unwrap_or(Value::Null);
        }
        set_node_timeouts(
            &mut machine,
            [
                &input.topology.node_drain_timeout,
                &input.topology.node_volume_detach_timeout,
                &input.topology.node_deletion_timeout,
            ],
            [
                &input.class.node_drain_timeout,
                &input.class.node_volume_detach_timeout,
                &input.class.node_deletion_timeout,
            ],
        );
        spec["machineTemplate"] = machine;
    }
    object
}
