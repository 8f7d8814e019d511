//! MachinePool (cluster.x-k8s.io/v1beta1, from Cluster API's exp API): a group of nodes the
//! infrastructure provider scales as one (a cloud scale set).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::common::{Condition, ObjectMeta, ObjectReference};
use super::machine_set::{MachineTemplateSpec, ReplicasV1Beta2Status};

/// A MachinePool.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachinePool {
    /// `cluster.x-k8s.io/v1beta1`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub api_version: String,
    /// `MachinePool`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub kind: String,
    /// Standard object metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// The desired state.
    #[serde(default)]
    pub spec: MachinePoolSpec,
    /// The observed state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<MachinePoolStatus>,
}

/// The desired state of a MachinePool.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachinePoolSpec {
    /// The Cluster the MachinePool belongs to.
    #[serde(default)]
    pub cluster_name: String,
    /// How many nodes to run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i32>,
    /// The template of the pool's nodes.
    #[serde(default)]
    pub template: MachineTemplateSpec,
    /// Seconds a node must be ready to count as available.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_ready_seconds: Option<i32>,
    /// The provider IDs of the pool's instances.
    #[serde(default, rename = "providerIDList", skip_serializing_if = "Vec::is_empty")]
    pub provider_id_list: Vec<String>,
    /// The failure domains instances may be placed in.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failure_domains: Vec<String>,
}

/// What the MachinePool controller observed.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachinePoolStatus {
    /// The pool's Nodes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub node_refs: Vec<ObjectReference>,
    /// Instances in the pool.
    #[serde(default)]
    pub replicas: i32,
    /// Instances whose Node is ready.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ready_replicas: Option<i32>,
    /// Instances ready for at least `minReadySeconds`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub available_replicas: Option<i32>,
    /// Instances still missing to reach the desired count.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unavailable_replicas: Option<i32>,
    /// A terminal problem, machine-readable (deprecated).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure_reason: Option<String>,
    /// A terminal problem, human-readable (deprecated).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure_message: Option<String>,
    /// `Pending`, `Provisioning`, `Provisioned`, `Running`, `ScalingUp`, `ScalingDown`,
    /// `Scaling`, `Deleting`, `Failed` or `Unknown`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub phase: String,
    /// Whether the bootstrap data is ready.
    #[serde(default)]
    pub bootstrap_ready: bool,
    /// Whether the infrastructure machine pool is ready.
    #[serde(default)]
    pub infrastructure_ready: bool,
    /// The generation the status describes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// v1beta1 conditions.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    /// v1beta2 conditions and replica counters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub v1beta2: Option<ReplicasV1Beta2Status>,
}
