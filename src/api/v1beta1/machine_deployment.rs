//! MachineDeployment (cluster.x-k8s.io/v1beta1): declarative rollouts of Machines through
//! MachineSets.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::common::{Condition, MachineDeploymentStrategy, ObjectMeta, Time};
use super::machine_set::{MachineNamingStrategy, MachineTemplateSpec, ReplicasV1Beta2Status};

/// A MachineDeployment.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachineDeployment {
    /// `cluster.x-k8s.io/v1beta1`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub api_version: String,
    /// `MachineDeployment`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub kind: String,
    /// Standard object metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// The desired state.
    #[serde(default)]
    pub spec: MachineDeploymentSpec,
    /// The observed state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<MachineDeploymentStatus>,
}

/// The desired state of a MachineDeployment.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachineDeploymentSpec {
    /// The Cluster the MachineDeployment belongs to.
    #[serde(default)]
    pub cluster_name: String,
    /// How many Machines to run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i32>,
    /// Machines created before this time are rolled out (deprecated).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rollout_after: Option<Time>,
    /// Selects the Machines the deployment owns.
    #[serde(default)]
    pub selector: LabelSelector,
    /// The template of new Machines.
    #[serde(default)]
    pub template: MachineTemplateSpec,
    /// How Machines are replaced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strategy: Option<MachineDeploymentStrategy>,
    /// How Machines are named.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine_naming_strategy: Option<MachineNamingStrategy>,
    /// Seconds a Machine must be ready to count as available.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_ready_seconds: Option<i32>,
    /// Old MachineSets kept for rollback (deprecated).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision_history_limit: Option<i32>,
    /// Stops rollouts.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub paused: bool,
    /// Seconds a rollout may take before it counts as failed (not enforced).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub progress_deadline_seconds: Option<i32>,
}

/// What the MachineDeployment controller observed.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachineDeploymentStatus {
    /// The generation the status describes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// The label selector in string form, for the scale subresource.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub selector: String,
    /// Machines owned (through MachineSets).
    #[serde(default)]
    pub replicas: i32,
    /// Machines with the current template.
    #[serde(default)]
    pub updated_replicas: i32,
    /// Machines whose Node is ready.
    #[serde(default)]
    pub ready_replicas: i32,
    /// Machines ready for at least `minReadySeconds`.
    #[serde(default)]
    pub available_replicas: i32,
    /// Machines still missing to reach the desired count.
    #[serde(default)]
    pub unavailable_replicas: i32,
    /// `ScalingUp`, `ScalingDown`, `Running`, `Failed` or `Unknown`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub phase: String,
    /// v1beta1 conditions.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    /// v1beta2 conditions and replica counters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub v1beta2: Option<ReplicasV1Beta2Status>,
}
