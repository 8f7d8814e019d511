//! The desired MachineDeployment of one worker topology.

use serde_json::{json, Map, Value};

use super::worker_object::WorkerObject;
use super::{merged_metadata, object_of, owned_labels, set_node_timeouts, set_opt, worker_annotations};
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
    /// `spec.rolloutAfter`, when the topology's rollout has reached this MachineDeployment.
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

/// The MachineDeployment: labels and annotations of the class template, then of the topology (the
/// topology wins), then the owned and deployment-name labels; topology values over class defaults.
pub fn desired(input: &MachineDeploymentInput<'_>) -> Value {
    let (class, topology) = (input.class, input.topology);
    let mut fixed = owned_labels(input.cluster);
    fixed.insert(TOPOLOGY_DEPLOYMENT_NAME_LABEL.to_owned(), topology.name.clone());
    let (labels, annotations) = merged_metadata(&[&class.template.metadata, &topology.metadata], fixed);
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
    }
    .build();
    let machine_spec = &mut object["spec"]["template"]["spec"];
    set_opt(
        machine_spec,
        "failureDomain",
        json!(topology.failure_domain.as_ref().or(class.failure_domain.as_ref())),
    );
    set_node_timeouts(
        machine_spec,
        [
            &topology.node_drain_timeout,
            &topology.node_volume_detach_timeout,
            &topology.node_deletion_timeout,
        ],
        [
            &class.node_drain_timeout,
            &class.node_volume_detach_timeout,
            &class.node_deletion_timeout,
        ],
    );
    let gates = if topology.readiness_gates.is_empty() {
        &class.readiness_gates
    } else {
        &topology.readiness_gates
    };
    if !gates.is_empty() {
        machine_spec["readinessGates"] = serde_json::to_value(gates).unwrap_or(Value::Null);
    }
    let spec = &mut object["spec"];
    spec["selector"] = object_of([("matchLabels", Value::Object(selector))]);
    set_opt(spec, "rolloutAfter", json!(input.rollout_after));
    let strategy = topology.strategy.as_ref().or(class.strategy.as_ref());
    set_opt(
        spec,
        "strategy",
        serde_json::to_value(strategy).unwrap_or(Value::Null),
    );
    object
}
