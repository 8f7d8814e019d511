//! The desired MachinePool of one worker topology, with its bootstrap config and infrastructure
//! machine pool (objects instantiated from the class's templates and updated in place).

use serde_json::{json, Value};

use super::worker_object::WorkerObject;
use super::{merged_metadata, node_timeouts, owned_labels, worker_annotations};
use crate::api::labels::TOPOLOGY_POOL_NAME_LABEL;
use crate::api::{MachinePoolClass, MachinePoolTopology};

/// What a MachinePool is built from.
#[derive(Debug, Clone, Copy)]
pub struct MachinePoolInput<'a> {
    /// The MachinePool's name.
    pub name: &'a str,
    /// The Cluster's namespace.
    pub namespace: &'a str,
    /// The Cluster's name.
    pub cluster: &'a str,
    /// The version to run.
    pub version: &'a str,
    /// The worker class.
    pub class: &'a MachinePoolClass,
    /// The worker topology.
    pub topology: &'a MachinePoolTopology,
    /// The bootstrap config object.
    pub bootstrap: &'a Value,
    /// The infrastructure machine pool object.
    pub infrastructure: &'a Value,
}

/// Adds the pool-name label to an object instantiated for the MachinePool `topology_name`.
pub fn label_pool_object(object: &mut Value, topology_name: &str) {
    if let Some(labels) = object["metadata"]["labels"].as_object_mut() {
        labels.insert(TOPOLOGY_POOL_NAME_LABEL.to_owned(), json!(topology_name));
    }
}

/// The MachinePool: labels and annotations of the class template, then of the topology (the
/// topology wins), then the owned and pool-name labels; topology values over class defaults.
pub fn desired(input: &MachinePoolInput<'_>) -> Value {
    let (class, topology) = (input.class, input.topology);
    let mut fixed = owned_labels(input.cluster);
    fixed.insert(TOPOLOGY_POOL_NAME_LABEL.to_owned(), topology.name.clone());
    let (labels, annotations) = merged_metadata(&[&class.metadata, &topology.metadata], fixed);
    let mut object = WorkerObject {
        kind: "MachinePool",
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
    let domains = if topology.failure_domains.is_empty() {
        &class.failure_domains
    } else {
        &topology.failure_domains
    };
    if !domains.is_empty() {
        object["spec"]["failureDomains"] = json!(domains);
    }
    object
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::labels::TOPOLOGY_DEFER_UPGRADE_ANNOTATION;

    #[test]
    fn a_machine_pool_takes_topology_values_over_class_defaults() {
        let class: MachinePoolClass = serde_json::from_value(json!({
            "class": "pool", "failureDomains": ["a"], "minReadySeconds": 5, "deletion": {"nodeDrainTimeoutSeconds": 60},
            "metadata": {"labels": {"tier": "class", "keep": "yes"}},
        }))
        .unwrap();
        let topology: MachinePoolTopology = serde_json::from_value(json!({
            "class": "pool", "name": "mp-0", "replicas": 2, "failureDomains": ["b", "c"],
            "metadata": {"labels": {"tier": "topology"}, "annotations": {TOPOLOGY_DEFER_UPGRADE_ANNOTATION: ""}},
        }))
        .unwrap();
        let bootstrap = json!({"apiVersion": "bootstrap.cluster.x-k8s.io/v1beta1", "kind": "KubeadmConfig",
            "metadata": {"name": "c1-mp-0-b", "namespace": "ns"}});
        let infrastructure = json!({"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1", "kind": "DockerMachinePool",
            "metadata": {"name": "c1-mp-0-i", "namespace": "ns"}});
        let pool = desired(&MachinePoolInput {
            name: "c1-mp-0-x",
            namespace: "ns",
            cluster: "c1",
            version: "v1.31.0",
            class: &class,
            topology: &topology,
            bootstrap: &bootstrap,
            infrastructure: &infrastructure,
        });
        assert_eq!(pool["kind"], "MachinePool");
        assert_eq!(pool["spec"]["replicas"], 2);
        assert_eq!(pool["apiVersion"], "cluster.x-k8s.io/v1beta2");
        assert_eq!(pool["spec"]["template"]["spec"]["minReadySeconds"], 5);
        assert_eq!(pool["spec"]["failureDomains"], json!(["b", "c"]));
        let labels = &pool["metadata"]["labels"];
        assert_eq!(labels["tier"], "topology");
        assert_eq!(labels["keep"], "yes");
        assert_eq!(labels[TOPOLOGY_POOL_NAME_LABEL], "mp-0");
        assert_eq!(
            pool["metadata"].get("annotations"),
            None,
            "sequencing annotations stay on the topology"
        );
        let machine = &pool["spec"]["template"]["spec"];
        assert_eq!(machine["version"], "v1.31.0");
        assert_eq!(machine["deletion"]["nodeDrainTimeoutSeconds"], 60);
        assert_eq!(machine["bootstrap"]["configRef"]["kind"], "KubeadmConfig");
        assert_eq!(
            machine["infrastructureRef"],
            json!({"apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "DockerMachinePool", "name": "c1-mp-0-i"})
        );
    }
}
