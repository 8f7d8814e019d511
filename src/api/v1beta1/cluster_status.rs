//! The observed state of a Cluster (`status`), typed. `Cluster::status` keeps it as raw JSON
//! because admission never reads it; `Cluster::typed_status` decodes it on demand.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition as MetaCondition;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::common::Condition;

/// What the Cluster controller observed.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterStatus {
    /// Failure domains the infrastructure provider offers, by name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub failure_domains: BTreeMap<String, FailureDomainSpec>,
    /// A terminal problem, machine-readable (deprecated).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure_reason: Option<String>,
    /// A terminal problem, human-readable (deprecated).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure_message: Option<String>,
    /// `Pending`, `Provisioning`, `Provisioned`, `Deleting`, `Failed` or `Unknown`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub phase: String,
    /// Whether the infrastructure cluster is ready.
    #[serde(default)]
    pub infrastructure_ready: bool,
    /// Whether the control plane is ready.
    #[serde(default)]
    pub control_plane_ready: bool,
    /// v1beta1 conditions, e.g. `TopologyReconciled`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    /// The generation the status describes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// v1beta2 conditions and replica counters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub v1beta2: Option<ClusterV1Beta2Status>,
}

/// One failure domain of a Cluster.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FailureDomainSpec {
    /// Whether control plane Machines may be placed in it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub control_plane: bool,
    /// Provider-specific attributes.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub attributes: BTreeMap<String, String>,
}

/// The `status.v1beta2` of a Cluster.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterV1Beta2Status {
    /// v1beta2 conditions.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(transform = crate::api::list_map::by_type)]
    pub conditions: Vec<MetaCondition>,
    /// Replica counters, versions and upgrade plan of the control plane (v1beta2's
    /// `status.controlPlane`, same shape since Cluster API v1.14).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub control_plane: Option<crate::api::ClusterControlPlaneStatus>,
    /// Replica counters, versions and upgrade plan of the workers (v1beta2's `status.workers`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workers: Option<crate::api::WorkersStatus>,
}
