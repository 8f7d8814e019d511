//! What a MachineDeployment and a MachinePool share: a Cluster's worker object whose machine
//! template runs a version from a bootstrap config and infrastructure reference and carries the
//! object's labels and annotations.

use serde_json::{json, Map, Value};

use super::{contract_ref_to, object_of, set_deletion, set_list, set_opt, CAPI_API_VERSION};
use crate::api::{MachineDeletionSpec, MachineTaint};

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
    /// The machines' node drain, volume detach and deletion timeouts.
    pub deletion: MachineDeletionSpec,
    /// The machines' taints.
    pub taints: &'a [MachineTaint],
}

impl WorkerObject<'_> {
    /// The object, at `cluster.x-k8s.io/v1beta2`: references as `{apiGroup, kind, name}`,
    /// `minReadySeconds`, `deletion` and `taints` on the machine template's spec; callers add what
    /// is particular to their kind.
    pub fn build(self) -> Value {
        let mut machine_spec = object_of([
            ("clusterName", json!(self.cluster)),
            ("version", json!(self.version)),
            (
                "bootstrap",
                object_of([("configRef", contract_ref_to(self.bootstrap))]),
            ),
            ("infrastructureRef", contract_ref_to(self.infrastructure)),
        ]);
        set_deletion(&mut machine_spec, &self.deletion);
        set_list(&mut machine_spec, "taints", self.taints);
        set_opt(
            &mut machine_spec,
            "minReadySeconds",
            json!(self.min_ready_seconds),
        );
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
        let mut metadata = object_of([
            ("name", json!(self.name)),
            ("namespace", json!(self.namespace)),
            ("labels", Value::Object(self.labels)),
        ]);
        set_opt(&mut metadata, "annotations", Value::Object(self.annotations));
        object_of([
            ("apiVersion", json!(CAPI_API_VERSION)),
            ("kind", json!(self.kind)),
            ("metadata", metadata),
            ("spec", spec),
        ])
    }
}
