//! MachineHealthCheck (cluster.x-k8s.io/v1beta2): when Machines count as unhealthy and how they
//! are remediated.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::common::{
    is_default, DeprecatedConditions, MachineHealthCheckChecks, MachineHealthCheckRemediation, MetaCondition,
    ObjectMeta,
};

/// A MachineHealthCheck.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachineHealthCheck {
    /// `cluster.x-k8s.io/v1beta2`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub api_version: String,
    /// `MachineHealthCheck`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub kind: String,
    /// Standard object metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// The desired state.
    #[serde(default)]
    pub spec: MachineHealthCheckSpec,
    /// The observed state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<MachineHealthCheckStatus>,
}

/// The desired state of a MachineHealthCheck: which Machines it watches, and the same checks a
/// ClusterClass or topology declares.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachineHealthCheckSpec {
    /// The Cluster the Machines belong to.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub cluster_name: String,
    /// Selects the Machines to check.
    #[serde(default)]
    pub selector: LabelSelector,
    /// What makes a Machine unhealthy.
    #[serde(default, skip_serializing_if = "is_default")]
    pub checks: MachineHealthCheckChecks,
    /// How unhealthy Machines are remediated (`maxInFlight` does not apply).
    #[serde(default, skip_serializing_if = "is_default")]
    #[schemars(transform = crate::api::narrowed::remediation_without_max_in_flight)]
    pub remediation: MachineHealthCheckRemediation,
}

/// What the MachineHealthCheck controller observed.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachineHealthCheckStatus {
    /// Conditions, e.g. `RemediationAllowed`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(transform = crate::api::list_map::by_type)]
    pub conditions: Vec<MetaCondition>,
    /// Machines the selector matches.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected_machines: Option<i32>,
    /// Machines currently healthy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current_healthy: Option<i32>,
    /// Remediations still allowed before `triggerIf` stops them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remediations_allowed: Option<i32>,
    /// The generation the status describes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// Names of the Machines checked.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub targets: Vec<String>,
    /// What v1beta1 reported (its conditions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deprecated: Option<DeprecatedConditions>,
}
