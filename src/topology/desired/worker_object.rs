//! What a MachineDeployment and a MachinePool share: a Cluster's worker object whose machine
//! template runs a version from a bootstrap config and infrastructure reference and carries the
//! object's labels and annotations.

use serde_json::{json, Map, Value};

use super::{object_of, reference_to, set_opt};

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
        let machine_spec = object_of([
            ("clusterName", json!(self.cluster)),
            ("version", json!(self.version)),
            (
                "bootstrap",
                object_of([("configRef", reference_to(self.bootstrap))]),
            ),
            ("infrastructureRef", reference_to(self.infrastructure)),
        ]);
        let mut template_metadata = object_of([("labels", Value::Object(self.labels.clone()))]);
        set_opt(
            &mut template_metadata,
            "annotations",
            Value::Object(self.annotations.clone()),
        );
        let mut spec = object_of([
            ("clusterName", json!(self.cluster)),
            (
                "template",
                object_of([("metadata", template_metadata), ("spec", machine_spec)]),
            ),
        ]);
        set_opt(&mut spec, "replicas", json!(self.replicas));
        set_opt(&mut spec, "minReadySeconds", json!(self.min_ready_seconds));
        let mut metadata = object_of([
            ("name", json!(self.name)),
            ("namespace", json!(self.namespace)),
            ("labels", Value::Object(self.labels)),
        ]);
        set_opt(&mut metadata, "annotations", Value::Object(self.annotations));
        object_of([
            ("apiVersion", json!("cluster.x-k8s.io/v1beta1")),
            ("kind", json!(self.kind)),
            ("metadata", metadata),
            ("spec", spec),
        ])
    }
}
