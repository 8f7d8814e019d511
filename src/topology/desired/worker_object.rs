//! What a MachineDeployment and a MachinePool share: a Cluster's worker object whose machine
//! template runs a version from a bootstrap config and infrastructure reference and carries the
//! object's labels and annotations.

use serde_json::{json, Map, Value};

use super::{reference_to, set_opt};

/// The shared fields of a worker object.
#[derive(Debug, Clone)]
pub struct WorkerObject<'a> {
    /// `MachineDeployment` or `MachinePool`.
    pub kind: &'a str,
    /// The object's name.
    pub name: &'a str,
    /// The Cluster's namespace.
    pub namespace: &'a str,
    /// The Cluster's name.
    pub cluster: &'a str,
    /// The version its machines run.
    pub version: &'a str,
    /// The bootstrap config (template) its machines use.
    pub bootstrap: &'a Value,
    /// The infrastructure machine template or machine pool.
    pub infrastructure: &'a Value,
    /// Labels of the object and of its machine template.
    pub labels: Map<String, Value>,
    /// Annotations of the object and of its machine template.
    pub annotations: Map<String, Value>,
    /// Replicas, when the topology sets them.
    pub replicas: Option<i32>,
    /// Seconds a machine must be ready to count as available.
    pub min_ready_seconds: Option<i32>,
}

impl WorkerObject<'_> {
    /// The object; callers add what is particular to their kind.
    pub fn build(self) -> Value {
        let machine_spec = json!({
            "clusterName": self.cluster,
            "version": self.version,
            "bootstrap": {"configRef": reference_to(self.bootstrap)},
            "infrastructureRef": reference_to(self.infrastructure),
        });
        let mut spec = json!({
            "clusterName": self.cluster,
            "template": {"metadata": {"labels": self.labels}, "spec": machine_spec},
        });
        set_opt(
            &mut spec["template"]["metadata"],
            "annotations",
            Value::Object(self.annotations.clone()),
        );
        set_opt(&mut spec, "replicas", json!(self.replicas));
        set_opt(&mut spec, "minReadySeconds", json!(self.min_ready_seconds));
        let mut object = json!({
            "apiVersion": "cluster.x-k8s.io/v1beta1",
            "kind": self.kind,
            "metadata": {"name": self.name, "namespace": self.namespace, "labels": self.labels},
            "spec": spec,
        });
        set_opt(
            &mut object["metadata"],
            "annotations",
            Value::Object(self.annotations),
        );
        object
    }
}
