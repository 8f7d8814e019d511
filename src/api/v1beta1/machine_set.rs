//! MachineSet (cluster.x-k8s.io/v1beta1): a replicated set of Machines from one template, plus
//! the template and replica-count types MachineDeployments and MachinePools share with it.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition as MetaCondition, LabelSelector};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::common::{Condition, ObjectMeta, TopologyMetadata};
use super::machine::MachineSpec;

/// A MachineSet.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachineSet {
    /// `cluster.x-k8s.io/v1beta1`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub api_version: String,
    /// `MachineSet`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub kind: String,
    /// Standard object metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// The desired state.
    #[serde(default)]
    pub spec: MachineSetSpec,
    /// The observed state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<MachineSetStatus>,
}

/// The desired state of a MachineSet.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachineSetSpec {
    /// The Cluster the MachineSet belongs to.
    #[serde(default)]
    pub cluster_name: String,
    /// How many Machines to run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i32>,
    /// Seconds a Machine must be ready to count as available.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_ready_seconds: Option<i32>,
    /// Which Machines to delete first: `Random`, `Newest` or `Oldest`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub delete_policy: String,
    /// Selects the Machines the set owns.
    #[serde(default)]
    pub selector: LabelSelector,
    /// The template of new Machines.
    #[serde(default)]
    pub template: MachineTemplateSpec,
    /// How Machines are named.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine_naming_strategy: Option<MachineNamingStrategy>,
}

/// The template of Machines: labels, annotations and spec.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachineTemplateSpec {
    /// Labels and annotations of the Machines.
    #[serde(
        default,
        deserialize_with = "super::common::null_as_default",
        skip_serializing_if = "TopologyMetadata::is_empty"
    )]
    pub metadata: TopologyMetadata,
    /// The Machines' spec.
    #[serde(default)]
    pub spec: MachineSpec,
}

/// A Go template for Machine names (`{{ .machineSet.name }}-{{ .random }}`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachineNamingStrategy {
    /// The template.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub template: String,
}

/// What the MachineSet controller observed.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachineSetStatus {
    /// The label selector in string form, for the scale subresource.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub selector: String,
    /// Machines owned.
    #[serde(default)]
    pub replicas: i32,
    /// Machines whose labels match the template's.
    #[serde(default)]
    pub fully_labeled_replicas: i32,
    /// Machines whose Node is ready.
    #[serde(default)]
    pub ready_replicas: i32,
    /// Machines ready for at least `minReadySeconds`.
    #[serde(default)]
    pub available_replicas: i32,
    /// The generation the status describes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// A terminal problem, machine-readable (deprecated).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure_reason: Option<String>,
    /// A terminal problem, human-readable (deprecated).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure_message: Option<String>,
    /// v1beta1 conditions.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    /// v1beta2 conditions and replica counters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub v1beta2: Option<ReplicasV1Beta2Status>,
}

/// The `status.v1beta2` of replicated kinds (MachineSet, MachineDeployment, MachinePool):
/// conditions and the v1beta2 replica counters.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReplicasV1Beta2Status {
    /// v1beta2 conditions.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<MetaCondition>,
    /// Machines whose Ready condition is true.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ready_replicas: Option<i32>,
    /// Machines whose Available condition is true.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub available_replicas: Option<i32>,
    /// Machines whose UpToDate condition is true.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub up_to_date_replicas: Option<i32>,
}

/// The v1beta2 status of a MachineSet (Cluster API's name for [`ReplicasV1Beta2Status`]).
pub type MachineSetV1Beta2Status = ReplicasV1Beta2Status;
/// The v1beta2 status of a MachineDeployment (Cluster API's name for [`ReplicasV1Beta2Status`]).
pub type MachineDeploymentV1Beta2Status = ReplicasV1Beta2Status;
/// The v1beta2 status of a MachinePool (Cluster API's name for [`ReplicasV1Beta2Status`]).
pub type MachinePoolV1Beta2Status = ReplicasV1Beta2Status;
