//! The desired control plane object.

use serde_json::{json, Value};

use super::{clone_template, merged_metadata, owned_labels, reference_to, set_node_timeouts, set_opt};
use crate::api::{ControlPlaneClass, ControlPlaneTopology};

/// What the control plane is built from.
#[derive(Debug, Clone, Copy)]
pub struct ControlPlaneInput<'a> {
    /// The patched control plane template.
    pub template: &'a Value,
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

/// The control plane: the template's spec, then the fields the topology owns set over whatever the
/// patches wrote (version, rolloutAfter, replicas, machineTemplate metadata, infrastructureRef, readiness gates, timeouts).
pub fn desired(input: &ControlPlaneInput<'_>) -> Value {
    let mut object = clone_template(
        input.template.clone(),
        input.name,
        input.namespace,
        input.cluster,
        true,
    );
    let (labels, annotations) = merged_metadata(
        &[&input.class.metadata, &input.topology.metadata],
        owned_labels(input.cluster),
    );
    object["metadata"]["labels"] = Value::Object(labels.clone());
    if let Some(map) = object["metadata"]["annotations"].as_object_mut() {
        map.extend(annotations.iter().map(|(k, v)| (k.clone(), v.clone())));
    }
    if !object["spec"].is_object() {
        object["spec"] = json!({});
    }
    let spec = &mut object["spec"];
    spec["version"] = json!(input.version);
    set_opt(spec, "rolloutAfter", json!(input.rollout_after));
    set_opt(spec, "replicas", json!(input.topology.replicas));
    if input.machine_infrastructure.is_some() || spec.get("machineTemplate").is_some() {
        let mut machine = spec.get("machineTemplate").cloned().unwrap_or_else(|| json!({}));
        machine["metadata"] = json!({"labels": labels});
        set_opt(
            &mut machine["metadata"],
            "annotations",
            Value::Object(annotations),
        );
        if let Some(infra) = input.machine_infrastructure {
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
