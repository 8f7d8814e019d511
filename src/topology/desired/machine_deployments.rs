//! The desired MachineDeployment of one worker topology.

use serde_json::{json, Map, Value};

use super::{merged_metadata, owned_labels, reference_to, set_opt};
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
    let mut machine_spec = json!({
        "clusterName": input.cluster,
        "version": input.version,
        "bootstrap": {"configRef": reference_to(input.bootstrap)},
        "infrastructureRef": reference_to(input.infrastructure),
    });
    set_opt(
        &mut machine_spec,
        "failureDomain",
        json!(topology.failure_domain.as_ref().or(class.failure_domain.as_ref())),
    );
    for (key, from_topology, from_class) in [
        (
            "nodeDrainTimeout",
            &topology.node_drain_timeout,
            &class.node_drain_timeout,
        ),
        (
            "nodeVolumeDetachTimeout",
            &topology.node_volume_detach_timeout,
            &class.node_volume_detach_timeout,
        ),
        (
            "nodeDeletionTimeout",
            &topology.node_deletion_timeout,
            &class.node_deletion_timeout,
        ),
    ] {
        set_opt(
            &mut machine_spec,
            key,
            json!(from_topology.as_ref().or(from_class.as_ref())),
        );
    }
    let gates = if topology.readiness_gates.is_empty() {
        &class.readiness_gates
    } else {
        &topology.readiness_gates
    };
    if !gates.is_empty() {
        machine_spec["readinessGates"] = serde_json::to_value(gates).unwrap_or(Value::Null);
    }
    let mut selector = Map::new();
    for key in [
        crate::api::labels::CLUSTER_NAME_LABEL,
        TOPOLOGY_DEPLOYMENT_NAME_LABEL,
    ] {
        if let Some(value) = labels.get(key) {
            selector.insert(key.to_owned(), value.clone());
        }
    }
    let mut spec = json!({
        "clusterName": input.cluster,
        "selector": {"matchLabels": selector},
        "template": {"metadata": {"labels": labels}, "spec": machine_spec},
    });
    set_opt(
        &mut spec["template"]["metadata"],
        "annotations",
        Value::Object(annotations.clone()),
    );
    set_opt(&mut spec, "replicas", json!(topology.replicas));
    set_opt(
        &mut spec,
        "minReadySeconds",
        json!(topology.min_ready_seconds.or(class.min_ready_seconds)),
    );
    let strategy = topology.strategy.as_ref().or(class.strategy.as_ref());
    set_opt(
        &mut spec,
        "strategy",
        serde_json::to_value(strategy).unwrap_or(Value::Null),
    );
    let mut object = json!({
        "apiVersion": "cluster.x-k8s.io/v1beta1",
        "kind": "MachineDeployment",
        "metadata": {"name": input.name, "namespace": input.namespace, "labels": labels},
        "spec": spec,
    });
    set_opt(&mut object["metadata"], "annotations", Value::Object(annotations));
    object
}
