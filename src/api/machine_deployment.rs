//! MachineDeployment (cluster.x-k8s.io/v1beta2): declarative rollouts of Machines through
//! MachineSets.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::cluster_status::StatusVersion;
use super::common::{
    is_default, Condition, MachineDeploymentRolloutStrategy, MetaCondition, ObjectMeta, Time,
};
use super::machine_set::{MachineNamingSpec, MachineSetDeletionSpec, MachineTemplateSpec};

/// A MachineDeployment.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachineDeployment {
    /// `cluster.x-k8s.io/v1beta2`.
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
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub cluster_name: String,
    /// How many Machines to run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i32>,
    /// When and how Machines are rolled out.
    #[serde(default, skip_serializing_if = "is_default")]
    pub rollout: MachineDeploymentRolloutSpec,
    /// Selects the Machines the deployment owns.
    #[serde(default)]
    pub selector: LabelSelector,
    /// The template of new Machines.
    #[serde(default, skip_serializing_if = "is_default")]
    pub template: MachineTemplateSpec,
    /// How Machines are named.
    #[serde(default, skip_serializing_if = "is_default")]
    pub machine_naming: MachineNamingSpec,
    /// How unhealthy Machines are remediated.
    #[serde(default, skip_serializing_if = "is_default")]
    pub remediation: MachineDeploymentRemediationSpec,
    /// Which Machines are deleted first.
    #[serde(default, skip_serializing_if = "is_default")]
    pub deletion: MachineSetDeletionSpec,
    /// Stops rollouts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paused: Option<bool>,
}

/// When and how a MachineDeployment rolls Machines out (`rollout`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachineDeploymentRolloutSpec {
    /// Machines created before this time are rolled out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<Time>,
    /// The rollout strategy.
    #[serde(default, skip_serializing_if = "is_default")]
    pub strategy: MachineDeploymentRolloutStrategy,
}

/// How a MachineDeployment remediates unhealthy Machines (`remediation`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachineDeploymentRemediationSpec {
    /// Machines remediated at the same time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_in_flight: Option<IntOrString>,
}

/// What the MachineDeployment controller observed.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachineDeploymentStatus {
    /// Conditions, e.g. `Available`, `RollingOut`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(transform = crate::api::list_map::by_type)]
    pub conditions: Vec<MetaCondition>,
    /// The generation the status describes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// The label selector in string form, for the scale subresource.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub selector: String,
    /// Machines owned (through MachineSets).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i32>,
    /// Machines whose Ready condition is true.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ready_replicas: Option<i32>,
    /// Machines whose Available condition is true.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub available_replicas: Option<i32>,
    /// Machines whose UpToDate condition is true.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub up_to_date_replicas: Option<i32>,
    /// The Kubernetes versions running, with their Machine counts.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(transform = crate::api::list_map::by_version)]
    pub versions: Vec<StatusVersion>,
    /// `ScalingUp`, `ScalingDown`, `Running`, `Failed` or `Unknown`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub phase: String,
    /// What v1beta1 reported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deprecated: Option<MachineDeploymentDeprecatedStatus>,
}

/// The `status.deprecated` of a MachineDeployment.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachineDeploymentDeprecatedStatus {
    /// What v1beta1 reported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub v1beta1: Option<MachineDeploymentV1Beta1DeprecatedStatus>,
}

/// The v1beta1 conditions and counters of a MachineDeployment (the counters are always written).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachineDeploymentV1Beta1DeprecatedStatus {
    /// v1beta1 conditions.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
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
}
