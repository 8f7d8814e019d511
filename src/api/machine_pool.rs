//! MachinePool (cluster.x-k8s.io/v1beta2, from Cluster API's exp API): a group of nodes the
//! infrastructure provider scales as one (a cloud scale set).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::cluster_status::StatusVersion;
use super::common::{is_default, Condition, MetaCondition, ObjectMeta, ObjectReference};
use super::machine::MachineInitializationStatus;
use super::machine_set::MachineTemplateSpec;

/// A MachinePool.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachinePool {
    /// `cluster.x-k8s.io/v1beta2`.
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
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub cluster_name: String,
    /// How many nodes to run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i32>,
    /// The template of the pool's nodes (`spec.minReadySeconds` lives there).
    #[serde(default, skip_serializing_if = "is_default")]
    pub template: MachineTemplateSpec,
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
    /// Conditions, e.g. `Available`, `ScalingUp`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(transform = crate::api::list_map::by_type)]
    pub conditions: Vec<MetaCondition>,
    /// Provisioning milestones.
    #[serde(default, skip_serializing_if = "is_default")]
    pub initialization: MachineInitializationStatus,
    /// The pool's Nodes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub node_refs: Vec<ObjectReference>,
    /// Instances in the pool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i32>,
    /// Instances whose Ready condition is true.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ready_replicas: Option<i32>,
    /// Instances whose Available condition is true.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub available_replicas: Option<i32>,
    /// Instances whose UpToDate condition is true.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub up_to_date_replicas: Option<i32>,
    /// The Kubernetes versions running, with their counts.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(transform = crate::api::list_map::by_version)]
    pub versions: Vec<StatusVersion>,
    /// `Pending`, `Provisioning`, `Provisioned`, `Running`, `ScalingUp`, `ScalingDown`,
    /// `Scaling`, `Deleting`, `Failed` or `Unknown`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub phase: String,
    /// The generation the status describes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// What v1beta1 reported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deprecated: Option<MachinePoolDeprecatedStatus>,
}

/// The `status.deprecated` of a MachinePool.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachinePoolDeprecatedStatus {
    /// What v1beta1 reported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub v1beta1: Option<MachinePoolV1Beta1DeprecatedStatus>,
}

/// The v1beta1 conditions, failure fields and counters of a MachinePool.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachinePoolV1Beta1DeprecatedStatus {
    /// v1beta1 conditions.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    /// A problem, machine-readable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure_reason: Option<String>,
    /// A problem, human-readable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure_message: Option<String>,
    /// Instances whose Node is ready.
    #[serde(default, skip_serializing_if = "is_default")]
    pub ready_replicas: i32,
    /// Instances ready for at least `minReadySeconds`.
    #[serde(default, skip_serializing_if = "is_default")]
    pub available_replicas: i32,
    /// Instances still missing to reach the desired count.
    #[serde(default, skip_serializing_if = "is_default")]
    pub unavailable_replicas: i32,
}
