//! MachineSet (cluster.x-k8s.io/v1beta2): a replicated set of Machines from one template, and the
//! template and status pieces MachineDeployments and MachinePools share.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::cluster_status::StatusVersion;
use super::common::{
    is_default, Condition, MachineSetDeletionOrder, MetaCondition, ObjectMeta, TopologyMetadata,
};
use super::machine::MachineSpec;

/// A MachineSet.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachineSet {
    /// `cluster.x-k8s.io/v1beta2`.
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
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub cluster_name: String,
    /// How many Machines to run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i32>,
    /// Selects the Machines the set owns.
    #[serde(default)]
    pub selector: LabelSelector,
    /// The template of new Machines.
    #[serde(default, skip_serializing_if = "is_default")]
    pub template: MachineTemplateSpec,
    /// How Machines are named.
    #[serde(default, skip_serializing_if = "is_default")]
    pub machine_naming: MachineNamingSpec,
    /// Which Machines are deleted first.
    #[serde(default, skip_serializing_if = "is_default")]
    pub deletion: MachineSetDeletionSpec,
}

/// How a MachineSet (or MachineDeployment) deletes Machines (`deletion`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachineSetDeletionSpec {
    /// Which Machines go first when scaling down (`Random` when unset).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub order: Option<MachineSetDeletionOrder>,
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
    #[serde(default, skip_serializing_if = "is_default")]
    pub spec: MachineSpec,
}

/// A Go template for Machine names (`{{ .machineSet.name }}-{{ .random }}`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachineNamingSpec {
    /// The template.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub template: String,
}

/// What the MachineSet controller observed.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachineSetStatus {
    /// Conditions, e.g. `MachinesReady`, `ScalingUp`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(transform = crate::api::list_map::by_type)]
    pub conditions: Vec<MetaCondition>,
    /// The label selector in string form, for the scale subresource.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub selector: String,
    /// Machines owned.
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
    /// The generation the status describes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// What v1beta1 reported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deprecated: Option<MachineSetDeprecatedStatus>,
}

/// The `status.deprecated` of a MachineSet.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachineSetDeprecatedStatus {
    /// What v1beta1 reported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub v1beta1: Option<MachineSetV1Beta1DeprecatedStatus>,
}

/// The v1beta1 conditions, failure fields and counters of a MachineSet.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachineSetV1Beta1DeprecatedStatus {
    /// v1beta1 conditions.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    /// A problem, machine-readable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure_reason: Option<String>,
    /// A problem, human-readable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure_message: Option<String>,
    /// Machines whose labels match the template's.
    #[serde(default)]
    pub fully_labeled_replicas: i32,
    /// Machines whose Node is ready.
    #[serde(default)]
    pub ready_replicas: i32,
    /// Machines ready for at least `minReadySeconds`.
    #[serde(default)]
    pub available_replicas: i32,
}
