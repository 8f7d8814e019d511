//! MachineHealthCheck (cluster.x-k8s.io/v1beta1): when Machines count as unhealthy and how they
//! are remediated.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::common::{Condition, MachineHealthCheckClass, ObjectMeta, V1Beta2Conditions};

/// A MachineHealthCheck.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachineHealthCheck {
    /// `cluster.x-k8s.io/v1beta1`.
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
    #[serde(default)]
    pub cluster_name: String,
    /// Selects the Machines to check.
    #[serde(default)]
    pub selector: LabelSelector,
    /// Unhealthy conditions, limits, startup timeout and remediation template.
    #[serde(flatten)]
    pub checks: MachineHealthCheckClass,
}

/// What the MachineHealthCheck controller observed.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachineHealthCheckStatus {
    /// Machines the selector matches.
    #[serde(default)]
    pub expected_machines: i32,
    /// Machines currently healthy.
    #[serde(default)]
    pub current_healthy: i32,
    /// Remediations still allowed before `maxUnhealthy` or `unhealthyRange` stops them.
    #[serde(default)]
    pub remediations_allowed: i32,
    /// The generation the status describes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// Names of the Machines checked.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub targets: Vec<String>,
    /// v1beta1 conditions.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    /// v1beta2 conditions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub v1beta2: Option<V1Beta2Conditions>,
}
