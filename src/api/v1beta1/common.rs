//! Types shared by several cluster.x-k8s.io/v1beta1 kinds: metadata, conditions, health checks,
//! rollout strategies.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use k8s_openapi::api::core::v1::ObjectReference;
pub use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition as MetaCondition, ObjectMeta, Time};

/// Decodes `null` as the type's default (Go decodes `labels: null` as an empty map).
pub(crate) fn null_as_default<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Default + Deserialize<'de>,
{
    Ok(Option::<T>::deserialize(deserializer)?.unwrap_or_default())
}

/// Labels and annotations a topology propagates to generated objects.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TopologyMetadata {
    /// Labels to set.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "BTreeMap::is_empty"
    )]
    pub labels: BTreeMap<String, String>,
    /// Annotations to set.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "BTreeMap::is_empty"
    )]
    pub annotations: BTreeMap<String, String>,
}

impl TopologyMetadata {
    /// True when neither labels nor annotations are set.
    pub fn is_empty(&self) -> bool {
        self.labels.is_empty() && self.annotations.is_empty()
    }
}

/// A v1beta1 condition (`status.conditions[]`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Condition {
    /// The condition's type, e.g. `VariablesReconciled`.
    #[serde(rename = "type")]
    pub type_: String,
    /// `True`, `False` or `Unknown`.
    pub status: String,
    /// `Error`, `Warning` or `Info` when the status is False.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub severity: Option<String>,
    /// When the status last changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_transition_time: Option<Time>,
    /// A CamelCase reason for the last transition.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// A human-readable message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// Conditions under `status.v1beta2` (metav1.Condition lists).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct V1Beta2Conditions {
    /// The conditions.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(transform = crate::api::list_map::by_type)]
    pub conditions: Vec<MetaCondition>,
}

/// A condition that gates a Machine's readiness.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachineReadinessGate {
    /// The condition type to look for on the Machine.
    pub condition_type: String,
    /// `Positive` (default) or `Negative`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub polarity: Option<String>,
}

/// A condition that gates the Cluster's availability.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterAvailabilityGate {
    /// The condition type to look for on the Cluster.
    pub condition_type: String,
    /// `Positive` (default) or `Negative`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub polarity: Option<String>,
}

/// A Node condition that, held for `timeout`, makes a Machine unhealthy.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UnhealthyCondition {
    /// The Node condition type.
    #[serde(rename = "type")]
    pub type_: String,
    /// The Node condition status.
    pub status: String,
    /// How long the condition must hold (a duration such as `300s`).
    pub timeout: String,
}

/// A Machine condition that, held for `timeout`, makes the Machine unhealthy: the same shape.
pub type UnhealthyMachineCondition = UnhealthyCondition;

/// MachineHealthCheck settings of a class or a topology.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachineHealthCheckClass {
    /// Node conditions that make a Machine unhealthy.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unhealthy_conditions: Vec<UnhealthyCondition>,
    /// Machine conditions that make a Machine unhealthy (backported from v1beta2 in Cluster
    /// API v1.12).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unhealthy_machine_conditions: Vec<UnhealthyMachineCondition>,
    /// Remediation stops when more Machines than this are unhealthy (count or percentage).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_unhealthy: Option<IntOrString>,
    /// Remediation only happens when the number of unhealthy Machines is in this range (`[1-3]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unhealthy_range: Option<String>,
    /// How long a Machine may take to get a Node (0 disables the check; otherwise at least 30s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_startup_timeout: Option<String>,
    /// A template for external remediation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remediation_template: Option<ObjectReference>,
}

/// How a MachineDeployment replaces Machines.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachineDeploymentStrategy {
    /// `RollingUpdate` or `OnDelete`.
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub type_: Option<String>,
    /// Rolling update parameters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rolling_update: Option<MachineRollingUpdateDeployment>,
    /// Remediation parameters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remediation: Option<RemediationStrategy>,
}

/// Rolling update parameters of a MachineDeployment.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachineRollingUpdateDeployment {
    /// Machines that may be unavailable during the update.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_unavailable: Option<IntOrString>,
    /// Machines that may be created above the desired count.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_surge: Option<IntOrString>,
    /// Which Machines to delete first: `Random`, `Newest` or `Oldest`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delete_policy: Option<String>,
}

/// Remediation parameters of a MachineDeployment.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RemediationStrategy {
    /// Machines remediated at the same time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_in_flight: Option<IntOrString>,
}

/// A reference to a template, as ClusterClasses hold them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LocalObjectTemplate {
    /// The template.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub r#ref: Option<ObjectReference>,
}
