//! The observed state of a Cluster (`status`), typed. `Cluster::status` keeps it as raw JSON
//! because admission never reads it; `Cluster::typed_status` decodes it on demand.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition as MetaCondition;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::common::{is_default, Condition};

/// What the Cluster controller observed.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterStatus {
    /// Conditions, e.g. `Available`, `TopologyReconciled`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(transform = crate::api::list_map::by_type)]
    pub conditions: Vec<MetaCondition>,
    /// Provisioning milestones.
    #[serde(default, skip_serializing_if = "is_default")]
    pub initialization: ClusterInitializationStatus,
    /// Replica counters and versions of the control plane.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub control_plane: Option<ClusterControlPlaneStatus>,
    /// Replica counters and versions summed over MachineDeployments, MachinePools and
    /// MachineSets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workers: Option<WorkersStatus>,
    /// Failure domains the infrastructure provider offers.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(transform = crate::api::list_map::by_name)]
    pub failure_domains: Vec<FailureDomain>,
    /// `Pending`, `Provisioning`, `Provisioned`, `Deleting`, `Failed` or `Unknown`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub phase: String,
    /// The generation the status describes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// What v1beta1 reported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deprecated: Option<ClusterDeprecatedStatus>,
}

/// Provisioning milestones of a Cluster (`status.initialization`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterInitializationStatus {
    /// The infrastructure cluster is provisioned (v1beta1 `infrastructureReady`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub infrastructure_provisioned: Option<bool>,
    /// The control plane is initialized (v1beta1 `controlPlaneReady`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub control_plane_initialized: Option<bool>,
}

/// One failure domain of a Cluster.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FailureDomain {
    /// The failure domain's name (the list key).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// Whether control plane Machines may be placed in it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub control_plane: Option<bool>,
    /// Provider-specific attributes.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub attributes: BTreeMap<String, String>,
}

/// The `status.deprecated` of a Cluster.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterDeprecatedStatus {
    /// What v1beta1 reported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub v1beta1: Option<ClusterV1Beta1DeprecatedStatus>,
}

/// The `status.deprecated` of a Machine: the same shape as a Cluster's.
pub type MachineDeprecatedStatus = ClusterDeprecatedStatus;

/// The v1beta1 conditions and failure fields of a Cluster or a Machine, kept until v1beta1 goes.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterV1Beta1DeprecatedStatus {
    /// v1beta1 conditions, e.g. `TopologyReconciled`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    /// A problem, machine-readable (no longer terminal).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure_reason: Option<String>,
    /// A problem, human-readable (no longer terminal).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure_message: Option<String>,
}

/// Replica counters, versions and upgrade plan a Cluster reports for its control plane or its
/// workers.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReplicaCounters {
    /// Machines wanted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub desired_replicas: Option<i32>,
    /// Machines that exist.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i32>,
    /// Machines whose UpToDate condition is true.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub up_to_date_replicas: Option<i32>,
    /// Machines whose Ready condition is true.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ready_replicas: Option<i32>,
    /// Machines whose Available condition is true.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub available_replicas: Option<i32>,
    /// The Kubernetes versions running, with their Machine counts.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub versions: Vec<StatusVersion>,
    /// The versions an ongoing upgrade still steps through, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub upgrade_plan: Vec<StatusUpgradePlanVersion>,
}

/// A Kubernetes version and how many Machines run it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StatusVersion {
    /// The version.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub version: String,
    /// Machines running it.
    #[serde(default, skip_serializing_if = "is_default")]
    pub replicas: i32,
}

/// One step of an upgrade plan.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StatusUpgradePlanVersion {
    /// The version of the step.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub version: String,
}

/// The control plane counters of a Cluster (Cluster API's name for [`ReplicaCounters`]).
pub type ClusterControlPlaneStatus = ReplicaCounters;
/// The worker counters of a Cluster (Cluster API's name for [`ReplicaCounters`]).
pub type WorkersStatus = ReplicaCounters;

impl ClusterStatus {
    /// The failure domain named `name`.
    pub fn failure_domain(&self, name: &str) -> Option<&FailureDomain> {
        self.failure_domains.iter().find(|domain| domain.name == name)
    }
}
