//! The desired MachineDeployment of one worker topology.

use serde_json::{json, Map, Value};

use super::worker_object::WorkerObject;
use super::{merged_metadata, node_timeouts, object_of, owned_labels, set_list, set_opt, worker_annotations};
use crate::api::labels::TOPOLOGY_DEPLOYMENT_NAME_LABEL;
use crate::api::{MachineDeploymentClass, MachineDeploymentTopology};

/// What a MachineDeployment is built from.
#[derive(Debug, Clone, Copy)]
pub struct MachineDeploymentInput<'a> {
    /// The MachineDeployment's name.
    pub name: &'a str,
    /// The Cluster's namespace.
    pub namespace: &'a str,
    /// The Cluster's name.
    pub cluster: &'a str,
    /// The version to run.
    pub version: &'a str,
    /// The v1beta1 topology-wide `rolloutAfter` (kept on the hub in an annotation), when the
    /// sequencing has reached this MachineDeployment: `spec.rollout.after` unless the topology
    /// sets its own `rollout`.
    pub rollout_after: Option<&'a str>,
    /// The worker class.
    pub class: &'a MachineDeploymentClass,
    /// The worker topology.
    pub topology: &'a MachineDeploymentTopology,
    /// The cloned bootstrap config template.
    pub bootstrap: &'a Value,
    /// The cloned infrastructure machine template.
    pub infrastructure: &'a Value,
}

/// The MachineDeployment at v1beta2: labels and annotations of the class, then of the topology
/// (the topology wins), then the owned and deployment-name labels; topology values over class
/// defaults, as Cluster API v1.14 computes them (`rollout` is the topology's whole when it sets
/// one, else the class's strategy).
pub fn desired(input: &MachineDeploymentInput<'_>) -> Value {
    let (class, topology) = (input.class, input.topology);
    let mut fixed = owned_labels(input.cluster);
    fixed.insert(TOPOLOGY_DEPLOYMENT_NAME_LABEL.to_owned(), topology.name.clone());
    let (labels, annotations) = merged_metadata(&[&class.metadata, &topology.metadata], fixed);
    let selector = selector_of(&labels);
    let mut object = WorkerObject {
        kind: "MachineDeployment",
        name: input.name,
        namespace: input.namespace,
        cluster: input.cluster,
        version: input.version,
        bootstrap: input.bootstrap,
        infrastructure: input.infrastructure,
        labels,
        annotations: worker_annotations(annotations),
        replicas: topology.replicas,
        min_ready_seconds: topology.min_ready_seconds.or(class.min_ready_seconds),
        deletion: node_timeouts(&topology.deletion, &class.deletion),
        taints: if topology.taints.is_empty() {
            &class.taints
        } else {
            &topology.taints
        },
    }
    .build();
    let machine_spec = &mut object["spec"]["template"]["spec"];
    let failure_domain = if topology.failure_domain.is_empty() {
        &class.failure_domain
    } else {
        &topology.failure_domain
    };
    if !failure_domain.is_empty() {
        machine_spec["failureDomain"] = json!(failure_domain);
    }
    let gates = if topology.readiness_gates.is_empty() {
        &class.readiness_gates
    } else {
        &topology.readiness_gates
    };
    set_list(machine_spec, "readinessGates", gates);
    let spec = &mut object["spec"];
    spec["selector"] = object_of([("matchLabels", Value::Object(selector))]);
    set_opt(spec, "rollout", rollout(input));
    let order = topology.deletion.order.or(class.deletion.order);
    set_opt(
        spec,
        "deletion",
        json!(order.map(|order| json!({"order": order}))),
    );
    let max_in_flight = topology.health_check.remediation.max_in_flight.as_ref().or(class
        .health_check
        .remediation
        .max_in_flight
        .as_ref());
    set_opt(
        spec,
        "remediation",
        json!(max_in_flight.map(|m| json!({"maxInFlight": m}))),
    );
    object
}

/// The MachineDeployment's selector: the labels that tie its Machines to the Cluster, the
/// topology and this deployment.
fn selector_of(labels: &Map<String, Value>) -> Map<String, Value> {
    let mut selector = Map::new();
    for key in [
        crate::api::labels::CLUSTER_NAME_LABEL,
        crate::api::labels::TOPOLOGY_OWNED_LABEL,
        TOPOLOGY_DEPLOYMENT_NAME_LABEL,
    ] {
        if let Some(value) = labels.get(key) {
            selector.insert(key.to_owned(), value.clone());
        }
    }
    selector
}

/// `spec.rollout`: the topology's whole when it sets one, else the class's strategy; with the
/// topology-wide `rolloutAfter` when the rollout has no `after` of its own.
fn rollout(input: &MachineDeploymentInput<'_>) -> Value {
    let (class, topology) = (input.class, input.topology);
    let mut rollout = if topology.rollout == Default::default() {
        json!({"strategy": class.rollout.strategy})
    } else {
        serde_json::to_value(&topology.rollout).unwrap_or_else(|_| json!({}))
    };
    if rollout.get("after").is_none() {
        set_opt(&mut rollout, "after", json!(input.rollout_after));
    }
    if rollout["strategy"].as_object().is_some_and(Map::is_empty) || rollout["strategy"].is_null() {
        if let Some(map) = rollout.as_object_mut() {
            map.remove("strategy");
        }
    }
    rollout
}
